import { maintenanceConfigSchema, parseEnv } from '@brokkr/config';
import { readConfigFile } from './config-file.ts';

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

/** Brokkr's change record (`POST /admin/config/reload`): dotted lower-case key, string values. */
export interface ConfigChange {
  key: string;
  old_value: string;
  new_value: string;
}

/** `BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS` → `broker.audit_log_retention_days`. */
export function dottedKey(envName: string): string {
  return envName.replace(/^BROKKR__/, '').split('__').join('.').toLowerCase();
}

/**
 * Brokkr's precedence: defaults < file (BROKKR_CONFIG_FILE) < environment. The environment of
 * a running process does not change, so in practice a reload picks up file edits for every key
 * the environment does not set.
 */
export async function loadSettings(env: NodeJS.ProcessEnv, file: string | undefined): Promise<Settings> {
  const fromFile = await readConfigFile(file);
  const merged: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = env[key] ?? fromFile[key];
    if (value !== undefined) merged[key] = value;
  }
  return parseEnv(reloadableSchema, merged as NodeJS.ProcessEnv);
}

export function diffSettings(before: Settings, after: Settings): ConfigChange[] {
  return SETTING_KEYS.filter((key) => String(before[key]) !== String(after[key])).map((key) => ({
    key: dottedKey(key),
    old_value: String(before[key]),
    new_value: String(after[key]),
  }));
}
