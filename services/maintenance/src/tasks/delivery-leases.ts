import { publishCore, SUBJECTS } from '@brokkr/bus';
import type { DeliveriesDueNotice } from '@brokkr/contracts';
import { releaseExpiredLeases, requeueDueRetries } from '@brokkr/webhook-deliveries';
import { repeatWhileFull } from '../runner/batches.ts';
import type { MaintenanceTask } from './task.ts';

/**
 * Expired leases and due retries go back to `pending`, then a wake-up on
 * `brokkr.notify.deliveries` lets the dispatchers claim them now rather than on their next
 * poll (a lost hint only costs that delay).
 */
export const deliveryLeasesTask: MaintenanceTask = {
  name: 'delivery-leases',
  intervalSeconds: (s) => s.webhookDeliveryIntervalSeconds,
  async run({ db, settings, nc, logger }) {
    const batch = settings.batchSize;
    const released = await repeatWhileFull(batch, (limit) => releaseExpiredLeases(db, limit));
    const requeued = await repeatWhileFull(batch, (limit) => requeueDueRetries(db, limit));
    if (released + requeued > 0) {
      try {
        const notice: DeliveriesDueNotice = { source: 'maintenance', released_leases: released, requeued_retries: requeued };
        publishCore(nc, SUBJECTS.notifyDeliveries, notice);
      } catch (err) {
        logger.debug({ err }, 'deliveries wake-up not sent');
      }
    }
    return released + requeued;
  },
};
