import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { ConfigError } from '@brokkr/errors';

/** What a config file contributes: BROKKR__SECTION__KEY names and their raw values. */
export type FlatConfig = Record<string, string | number | boolean>;

function flatten(node: unknown, prefix: string, out: FlatConfig): void {
  if (Array.isArray(node)) {
    // Brokkr's list settings (CORS origins) are comma-separated in the environment too.
    out[prefix] = node.map(String).join(',');
  } else if (node !== null && typeof node === 'object' && !(node instanceof Date)) {
    for (const [key, value] of Object.entries(node)) flatten(value, `${prefix}__${key.toUpperCase()}`, out);
  } else if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') {
    out[prefix] = node;
  } else if (node instanceof Date) {
    out[prefix] = node.toISOString();
  }
}

/**
 * Brokkr's file layout: `[broker] audit_log_retention_days = 30` is
 * `BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS`, `[log] level = "warn"` is `BROKKR__LOG__LEVEL`.
 * `.json` files are JSON with the same nesting, anything else is TOML.
 */
export function flattenConfig(document: unknown): FlatConfig {
  const out: FlatConfig = {};
  flatten(document, 'BROKKR', out);
  return out;
}

export function parseConfigText(text: string, fileName: string): unknown {
  return path.extname(fileName).toLowerCase() === '.json' ? JSON.parse(text) : parseToml(text);
}

/**
 * Reads the optional config file. A missing file contributes nothing (it may be created later;
 * the watcher picks it up), an unreadable or malformed one is a ConfigError so the caller keeps
 * its current settings.
 */
export async function readConfigFile(file: string | undefined): Promise<FlatConfig> {
  if (!file) return {};
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    return flattenConfig(parseConfigText(text, file));
  } catch (err) {
    throw new ConfigError(`invalid config file ${file}: ${(err as Error).message}`);
  }
}
