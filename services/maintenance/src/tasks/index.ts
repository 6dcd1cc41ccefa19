import { deliveryLeasesTask } from './delivery-leases.ts';
import { diagnosticsTask } from './diagnostics.ts';
import { outboxRelayTask } from './outbox-relay.ts';
import {
  agentEventsRetentionTask,
  auditRetentionTask,
  outboxPruneTask,
  previewRetentionTask,
  telemetryRetentionTask,
  webhookCleanupTask,
} from './retention.ts';
import { rolloutsTask } from './rollouts.ts';
import { stackExpiryTask } from './stack-expiry.ts';
import type { MaintenanceTask } from './task.ts';
import { workOrdersTask } from './work-orders.ts';

export const ALL_TASKS: readonly MaintenanceTask[] = [
  outboxRelayTask,
  deliveryLeasesTask,
  workOrdersTask,
  rolloutsTask,
  stackExpiryTask,
  diagnosticsTask,
  webhookCleanupTask,
  auditRetentionTask,
  agentEventsRetentionTask,
  telemetryRetentionTask,
  previewRetentionTask,
  outboxPruneTask,
];

export {
  outboxRelayTask,
  deliveryLeasesTask,
  workOrdersTask,
  rolloutsTask,
  stackExpiryTask,
  diagnosticsTask,
  webhookCleanupTask,
  auditRetentionTask,
  agentEventsRetentionTask,
  telemetryRetentionTask,
  previewRetentionTask,
  outboxPruneTask,
};
export type { MaintenanceTask, TaskContext } from './task.ts';
