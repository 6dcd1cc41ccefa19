import { z } from 'zod';
import { bool, database, health, int, log, nats, telemetry } from '../fields.ts';

/** The services without a public HTTP API serve /healthz, /readyz and /metrics on their own port. */

export const auditWriterConfigSchema = z.object({
  ...database,
  ...log,
  ...nats,
  ...telemetry,
  ...health(9102),
  BROKKR__AUDIT__BATCH_SIZE: int(100, 1, 1000),
  BROKKR__AUDIT__FLUSH_INTERVAL_MS: int(1000, 10, 60000),
});
export type AuditWriterConfig = z.output<typeof auditWriterConfigSchema>;

export const webhookDispatcherConfigSchema = z.object({
  ...database,
  ...log,
  ...nats,
  ...telemetry,
  ...health(9101),
  BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64})?$/, 'must be 64 hexadecimal characters')
    .optional(),
  /** Most deliveries claimed by one statement. */
  BROKKR__BROKER__WEBHOOK_DELIVERY_BATCH_SIZE: int(50, 1, 1000),
  /** The delivery loop also polls this often (due retries, hints lost while NATS was down). */
  BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: int(5, 1, 3600),
  /** Off by default: targets resolving to loopback, private, link-local or metadata addresses are refused (SSRF). */
  BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool(false),
  /** POSTs in flight per replica. */
  BROKKR__BROKER__WEBHOOK_CONCURRENCY: int(64, 1, 4096),
  /** POSTs in flight per replica to one host, so one slow receiver cannot take every slot. */
  BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY: int(8, 1, 1024),
  /** Floor of the claim lease; a POST's lease is stretched to its timeout + 10 s when that is longer (@brokkr/webhook-deliveries). */
  BROKKR__BROKER__WEBHOOK_LEASE_SECONDS: int(60, 5, 3600),
  /** Upper bound of the retry backoff (a receiver's Retry-After may ask for up to 24 h). */
  BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS: int(3600, 1, 86400),
});
export type WebhookDispatcherConfig = z.output<typeof webhookDispatcherConfigSchema>;

/**
 * Maintenance timers. Brokkr's names where Brokkr has the setting, ours under
 * BROKKR__MAINTENANCE__*. Everything from the log level down to the batch size is reloadable
 * (env, or the optional BROKKR_CONFIG_FILE, re-read on `brokkr.config.reload` and when the file
 * changes). Retentions in days: 0 disables that eviction.
 */
export const maintenanceConfigSchema = z.object({
  ...database,
  ...log,
  ...nats,
  ...telemetry,
  ...health(9103),
  BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS: int(900, 1),
  BROKKR__BROKER__DIAGNOSTIC_MAX_AGE_HOURS: int(1, 0),
  /** Brokkr releases expired delivery leases on its delivery tick; our lease reaper uses the same cadence. */
  BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: int(5, 1, 3600),
  BROKKR__BROKER__WEBHOOK_CLEANUP_RETENTION_DAYS: int(7, 0),
  BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS: int(90, 0),
  BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS: int(30, 0),
  BROKKR__MAINTENANCE__OUTBOX_RELAY_INTERVAL_SECONDS: int(2, 1, 3600),
  BROKKR__MAINTENANCE__OUTBOX_RELAY_AFTER_SECONDS: int(5, 1),
  BROKKR__MAINTENANCE__OUTBOX_RETENTION_HOURS: int(24, 0),
  /** Diff previews (and their results) are kept this long after their hand-out window ends; 0 keeps them. */
  BROKKR__MAINTENANCE__PREVIEW_RETENTION_HOURS: int(24, 0),
  BROKKR__MAINTENANCE__WORK_ORDER_INTERVAL_SECONDS: int(10, 1, 3600),
  /** How often progressive rollouts are started and their gates checked (a failed gate rolls back within about this long). */
  BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: int(1, 1, 3600),
  /** How often expiring stacks are announced and expired ones deleted. */
  BROKKR__MAINTENANCE__STACK_EXPIRY_INTERVAL_SECONDS: int(10, 1, 3600),
  /** `stack.expiring` is sent this long before a stack expires (at once for a shorter TTL). */
  BROKKR__MAINTENANCE__STACK_EXPIRY_WARNING_SECONDS: int(600, 0, 30 * 24 * 3600),
  /** Webhook-delivery, audit, agent-event and outbox retention. */
  BROKKR__MAINTENANCE__CLEANUP_INTERVAL_SECONDS: int(3600, 1),
  /** Rows per statement; a tick repeats a statement at most 100 times. */
  BROKKR__MAINTENANCE__BATCH_SIZE: int(1000, 1, 100_000),
  BROKKR_CONFIG_FILE: z.string().optional(),
  BROKKR_CONFIG_WATCHER_ENABLED: bool(true),
  BROKKR_CONFIG_WATCHER_DEBOUNCE_SECONDS: int(5, 0, 3600),
});
export type MaintenanceConfig = z.output<typeof maintenanceConfigSchema>;
