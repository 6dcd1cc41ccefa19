import type { z } from 'zod';
import { parseEnv } from './parse.ts';
import { readConfigFile } from './config-file.ts';

/** Brokkr's change record (`POST /admin/config/reload`): dotted lower-case key, string values. */
export interface ConfigChange {
  key: string;
  old_value: string;
  new_value: string;
}

/** `BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS` → `broker.audit_log_retention_days`. */
export function dottedKey(envName: string): string {
  return envName
    .replace(/^BROKKR__/, '')
    .split('__')
    .join('.')
    .toLowerCase();
}

/**
 * Reads the settings of `schema` with Brokkr's precedence: defaults < file (BROKKR_CONFIG_FILE)
 * < environment. The environment of a running process does not change, so a reload picks up
 * file edits for every key the environment does not set.
 */
export async function loadLayeredSettings<S extends z.ZodObject>(
  schema: S,
  env: NodeJS.ProcessEnv,
  file: string | undefined,
): Promise<z.output<S>> {
  const fromFile = await readConfigFile(file);
  const merged: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key] ?? fromFile[key];
    if (value !== undefined) merged[key] = value;
  }
  return parseEnv(schema, merged as NodeJS.ProcessEnv);
}

/** The keys whose values differ, in the schema's order. */
export function diffSettings<T extends Record<string, unknown>>(keys: readonly (keyof T & string)[], before: T, after: T): ConfigChange[] {
  return keys
    .filter((key) => String(before[key]) !== String(after[key]))
    .map((key) => ({ key: dottedKey(key), old_value: String(before[key]), new_value: String(after[key]) }));
}
