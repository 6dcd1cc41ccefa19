import { z } from 'zod';
import { database, health, int, log, nats, telemetry } from '../fields.ts';

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
  BROKKR__BROKER__WEBHOOK_DELIVERY_BATCH_SIZE: int(50, 1, 1000),
  BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: int(5, 1, 3600),
  BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});
export type WebhookDispatcherConfig = z.output<typeof webhookDispatcherConfigSchema>;

export const maintenanceConfigSchema = z.object({
  ...database,
  ...log,
  ...nats,
  ...telemetry,
  ...health(9103),
  BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS: int(900, 1),
  BROKKR__BROKER__DIAGNOSTIC_MAX_AGE_HOURS: int(1, 0),
  BROKKR__BROKER__WEBHOOK_CLEANUP_RETENTION_DAYS: int(7, 0),
  BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS: int(90, 0),
  BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS: int(30, 0),
  BROKKR__MAINTENANCE__OUTBOX_RELAY_AFTER_SECONDS: int(5, 1),
  BROKKR__MAINTENANCE__OUTBOX_RETENTION_HOURS: int(24, 0),
  BROKKR_CONFIG_FILE: z.string().optional(),
});
export type MaintenanceConfig = z.output<typeof maintenanceConfigSchema>;
