import { sendAgentNotices } from '@brokkr/bus';
import { repeatWhileFull } from '../runner/batches.ts';
import { promoteDueWorkOrderRetries } from '../sql/promote-due-work-order-retries.ts';
import { releaseStaleWorkOrderClaims } from '../sql/release-stale-work-order-claims.ts';
import { publishAuditFeed } from './audit-feed.ts';
import type { MaintenanceTask } from './task.ts';

/**
 * Brokkr's work-order maintenance (every 10 s): due retries and stale claims become PENDING.
 * Released claims are audited (`workorder.claim_released`), and the agents the orders target
 * are woken (`brokkr.notify.agent.<id>`). Every statement re-checks its rows, so a second run or
 * another replica changes (and audits, and wakes) nothing more.
 */
export const workOrdersTask: MaintenanceTask = {
  name: 'work-orders',
  intervalSeconds: (s) => s.workOrderIntervalSeconds,
  async run({ db, settings, js, nc, logger }) {
    const batch = settings.batchSize;
    const wake = new Set<string>();
    const promoted = await repeatWhileFull(batch, async (limit) => {
      const change = await promoteDueWorkOrderRetries(db, limit);
      for (const id of change.agentIds) wake.add(id);
      return change.count;
    });
    const released = await repeatWhileFull(batch, async (limit) => {
      const change = await releaseStaleWorkOrderClaims(db, limit);
      for (const id of change.agentIds) wake.add(id);
      await publishAuditFeed(js, change.audit, logger);
      return change.count;
    });
    sendAgentNotices(nc, wake, logger);
    return promoted + released;
  },
};
