import { repeatWhileFull } from '../runner/batches.ts';
import { promoteDueWorkOrderRetries } from '../sql/promote-due-work-order-retries.ts';
import { releaseStaleWorkOrderClaims } from '../sql/release-stale-work-order-claims.ts';
import type { MaintenanceTask } from './task.ts';

/** Brokkr's work-order maintenance (every 10 s): due retries and stale claims become PENDING. */
export const workOrdersTask: MaintenanceTask = {
  name: 'work-orders',
  intervalSeconds: (s) => s.workOrderIntervalSeconds,
  async run({ db, settings }) {
    const batch = settings.batchSize;
    const promoted = await repeatWhileFull(batch, (limit) => promoteDueWorkOrderRetries(db, limit));
    const released = await repeatWhileFull(batch, (limit) => releaseStaleWorkOrderClaims(db, limit));
    return promoted + released;
  },
};
