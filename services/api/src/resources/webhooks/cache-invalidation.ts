import { publishCore, SUBJECTS } from '@brokkr/bus';
import type { WebhookInvalidation } from '@brokkr/contracts';
import type { ApiContext } from '../../context.ts';

/** Every dispatcher replica drops its subscription cache (core `brokkr.cache.invalidate.webhooks`). */
export function invalidateSubscriptionCaches(ctx: Pick<ApiContext, 'bus' | 'logger'>, subscriptionId: string): void {
  try {
    publishCore(ctx.bus.nc, SUBJECTS.cacheInvalidate('webhooks'), { id: subscriptionId } satisfies WebhookInvalidation);
  } catch (err) {
    // The dispatchers also reload on their own every few seconds.
    ctx.logger.warn({ err, subscriptionId }, 'webhook cache invalidation not sent');
  }
}
