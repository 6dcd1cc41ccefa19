import { deleteFinishedDeliveries } from '@brokkr/webhook-deliveries';
import { repeatWhileFull } from '../runner/batches.ts';
import { deleteOldAgentEvents } from '../sql/delete-old-agent-events.ts';
import { deleteOldAuditLogs } from '../sql/delete-old-audit-logs.ts';
import { deleteOldPreviews } from '../sql/delete-old-previews.ts';
import { deleteOldTelemetry } from '../sql/delete-old-telemetry.ts';
import { prunePublishedOutbox } from '../sql/prune-published-outbox.ts';
import type { TaskClient } from '../sql/queryable.ts';
import type { TaskSettings } from '../settings/task-settings.ts';
import type { MaintenanceTask } from './task.ts';

type Eviction = (db: TaskClient, retention: number, limit: number) => Promise<number>;

/**
 * A retention task: deletes in bounded batches everything older than the retention it reads
 * from the live settings at each tick. A retention of 0 disables it (Brokkr documents that for
 * agent events; we apply it to every retention so that 0 never means "delete everything").
 */
function retentionTask(name: string, retention: (s: TaskSettings) => number, evict: Eviction): MaintenanceTask {
  return {
    name,
    intervalSeconds: (s) => s.cleanupIntervalSeconds,
    async run({ db, settings }) {
      const keep = retention(settings);
      if (keep <= 0) return 0;
      return repeatWhileFull(settings.batchSize, (limit) => evict(db, keep, limit));
    },
  };
}

export const webhookCleanupTask = retentionTask('webhook-cleanup', (s) => s.webhookCleanupRetentionDays, deleteFinishedDeliveries);
export const auditRetentionTask = retentionTask('audit-retention', (s) => s.auditLogRetentionDays, deleteOldAuditLogs);
export const agentEventsRetentionTask = retentionTask('agent-events-retention', (s) => s.agentEventsRetentionDays, deleteOldAgentEvents);
export const outboxPruneTask = retentionTask('outbox-prune', (s) => s.outboxRetentionHours, prunePublishedOutbox);
export const previewRetentionTask = retentionTask('preview-retention', (s) => s.previewRetentionHours, deleteOldPreviews);

/**
 * Stack telemetry (Kubernetes events and pod log lines): everything ingested more than 6 hours ago,
 * every 60 s as in Brokkr. Its runs and evicted rows are `brokkr_maintenance_runs_total` and
 * `brokkr_maintenance_rows_affected_total` with `task="telemetry-retention"` (Brokkr's
 * `brokkr_ws_log_eviction_runs_total` and `brokkr_ws_telemetry_evicted_total`).
 */
export const telemetryRetentionTask: MaintenanceTask = {
  name: 'telemetry-retention',
  intervalSeconds: () => 60,
  async run({ db, settings }) {
    let total = 0;
    for (const table of ['agent_k8s_events', 'agent_pod_logs'] as const) {
      total += await repeatWhileFull(settings.batchSize, (limit) => deleteOldTelemetry(db, table, limit));
    }
    return total;
  },
};
