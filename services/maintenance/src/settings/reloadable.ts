import { diffSettings as diffKeys, loadLayeredSettings, maintenanceReloadableSchema, type ConfigChange } from '@brokkr/config';

export const reloadableSchema = maintenanceReloadableSchema;
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
