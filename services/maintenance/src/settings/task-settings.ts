import type { Settings } from './reloadable.ts';

/**
 * What the tasks read, in the code's own names. The reloadable settings keep Brokkr's
 * `BROKKR__SECTION__KEY` names because the reload diff, the config file and the metrics report
 * them under those names; this mapping is the one place that knows both.
 */
export interface TaskSettings {
  batchSize: number;
  cleanupIntervalSeconds: number;
  workOrderIntervalSeconds: number;
  rolloutIntervalSeconds: number;
  stackExpiryIntervalSeconds: number;
  stackExpiryWarningSeconds: number;
  outboxRelayIntervalSeconds: number;
  outboxRelayAfterSeconds: number;
  outboxRetentionHours: number;
  previewRetentionHours: number;
  webhookDeliveryIntervalSeconds: number;
  webhookCleanupRetentionDays: number;
  auditLogRetentionDays: number;
  agentEventsRetentionDays: number;
  diagnosticCleanupIntervalSeconds: number;
  diagnosticMaxAgeHours: number;
}

export function taskSettings(s: Settings): TaskSettings {
  return {
    batchSize: s.BROKKR__MAINTENANCE__BATCH_SIZE,
    cleanupIntervalSeconds: s.BROKKR__MAINTENANCE__CLEANUP_INTERVAL_SECONDS,
    workOrderIntervalSeconds: s.BROKKR__MAINTENANCE__WORK_ORDER_INTERVAL_SECONDS,
    rolloutIntervalSeconds: s.BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS,
    stackExpiryIntervalSeconds: s.BROKKR__MAINTENANCE__STACK_EXPIRY_INTERVAL_SECONDS,
    stackExpiryWarningSeconds: s.BROKKR__MAINTENANCE__STACK_EXPIRY_WARNING_SECONDS,
    outboxRelayIntervalSeconds: s.BROKKR__MAINTENANCE__OUTBOX_RELAY_INTERVAL_SECONDS,
    outboxRelayAfterSeconds: s.BROKKR__MAINTENANCE__OUTBOX_RELAY_AFTER_SECONDS,
    outboxRetentionHours: s.BROKKR__MAINTENANCE__OUTBOX_RETENTION_HOURS,
    previewRetentionHours: s.BROKKR__MAINTENANCE__PREVIEW_RETENTION_HOURS,
    webhookDeliveryIntervalSeconds: s.BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS,
    webhookCleanupRetentionDays: s.BROKKR__BROKER__WEBHOOK_CLEANUP_RETENTION_DAYS,
    auditLogRetentionDays: s.BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS,
    agentEventsRetentionDays: s.BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS,
    diagnosticCleanupIntervalSeconds: s.BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS,
    diagnosticMaxAgeHours: s.BROKKR__BROKER__DIAGNOSTIC_MAX_AGE_HOURS,
  };
}
