import { publishCore, SUBJECTS } from '@brokkr/bus';
import type { DeliveriesDueNotice } from '@brokkr/contracts';
import type { ApiContext } from '../../context.ts';

/** Dispatchers claim due deliveries now instead of at their next poll (core `brokkr.notify.deliveries`). */
export function wakeDispatchers(ctx: Pick<ApiContext, 'bus' | 'logger'>): void {
  try {
    publishCore(ctx.bus.nc, SUBJECTS.notifyDeliveries, {} satisfies DeliveriesDueNotice);
  } catch (err) {
    ctx.logger.debug({ err }, 'delivery wake-up not sent');
  }
}
