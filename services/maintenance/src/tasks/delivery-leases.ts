import { publishCore, SUBJECTS } from '@brokkr/bus';
import type { DeliveriesDueNotice } from '@brokkr/contracts';
import { repeatWhileFull } from '../runner/batches.ts';
import { releaseExpiredDeliveryLeases } from '../sql/release-expired-delivery-leases.ts';
import { requeueDueDeliveryRetries } from '../sql/requeue-due-delivery-retries.ts';
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
    const released = await repeatWhileFull(batch, (limit) => releaseExpiredDeliveryLeases(db, limit));
    const requeued = await repeatWhileFull(batch, (limit) => requeueDueDeliveryRetries(db, limit));
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
