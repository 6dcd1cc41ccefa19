import { diffSettings as diffKeys, loadLayeredSettings, maintenanceConfigSchema, type ConfigChange } from '@brokkr/config';

/** The settings maintenance applies without a restart; the rest (URLs, ports) need one. */
export const reloadableSchema = maintenanceConfigSchema.pick({
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
  BROKKR__MAINTENANCE__WORK_ORDER_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__CLEANUP_INTERVAL_SECONDS: true,
  BROKKR__MAINTENANCE__BATCH_SIZE: true,
});
export type Settings = ReturnType<typeof reloadableSchema.parse>;
export type SettingKey = keyof Settings;

export const SETTING_KEYS = Object.keys(reloadableSchema.shape) as SettingKey[];

export type { ConfigChange } from '@brokkr/config';

/** Brokkr's precedence: defaults < file (BROKKR_CONFIG_FILE) < environment. */
export function loadSettings(env: NodeJS.ProcessEnv, file: string | undefined): Promise<Settings> {
  return loadLayeredSettings(reloadableSchema, env, file);
}

export function diffSettings(before: Settings, after: Settings): ConfigChange[] {
  return diffKeys(SETTING_KEYS, before, after);
}
