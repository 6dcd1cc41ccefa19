import { z } from 'zod';
import { apiConfigSchema } from './services/api.ts';
import { maintenanceConfigSchema, webhookDispatcherConfigSchema } from './services/hub.ts';

/** What maintenance applies on `brokkr.config.reload` without a restart (URLs and ports need one). */
export const maintenanceReloadableSchema = maintenanceConfigSchema.pick({
  BROKKR__LOG__LEVEL: true,
  BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS: true,
  BROKKR__BROKER__DIAGNOSTIC_MAX_AGE_HOURS: true,
  BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: true,
  BROKKR__BROKER__WEBHOOK_CLEANUP_RETENTION_DAYS: true,
  BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS: true,
  BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS: true,
  BROKKR__MAINTENANCE__OUTBOX_RELAY_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__OUTBOX_RELAY_AFTER_SECONDS: true,
  BROKKR__MAINTENANCE__OUTBOX_RETENTION_HOURS: true,
  BROKKR__MAINTENANCE__PREVIEW_RETENTION_HOURS: true,
  BROKKR__MAINTENANCE__WORK_ORDER_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__STACK_EXPIRY_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__STACK_EXPIRY_WARNING_SECONDS: true,
  BROKKR__MAINTENANCE__CLEANUP_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__BATCH_SIZE: true,
});

/**
 * Every setting `POST /admin/config/reload` compares, Brokkr's keys first (its response lists
 * changes in this order). Who applies what: the api its log level; maintenance the keys above;
 * the dispatcher's batch size and the CORS keys are reported but need a restart, as in Brokkr.
 */
export const hubReloadableSchema = z.object({
  ...maintenanceReloadableSchema.pick({
    BROKKR__LOG__LEVEL: true,
    BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS: true,
    BROKKR__BROKER__DIAGNOSTIC_MAX_AGE_HOURS: true,
    BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: true,
  }).shape,
  ...webhookDispatcherConfigSchema.pick({ BROKKR__BROKER__WEBHOOK_DELIVERY_BATCH_SIZE: true }).shape,
  ...maintenanceReloadableSchema.pick({ BROKKR__BROKER__WEBHOOK_CLEANUP_RETENTION_DAYS: true }).shape,
  ...apiConfigSchema.pick({ BROKKR__CORS__ALLOWED_ORIGINS: true, BROKKR__CORS__MAX_AGE_SECONDS: true }).shape,
  ...maintenanceReloadableSchema.omit({
    BROKKR__LOG__LEVEL: true,
    BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS: true,
    BROKKR__BROKER__DIAGNOSTIC_MAX_AGE_HOURS: true,
    BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: true,
    BROKKR__BROKER__WEBHOOK_CLEANUP_RETENTION_DAYS: true,
  }).shape,
});
