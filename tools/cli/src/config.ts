import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { CliError } from './errors.ts';

/** Where the hub is and who we are. Each field comes from the first source that has it. */
export interface Connection {
  /** The hub's root URL, without `/api/v1` (e.g. http://127.0.0.1:3000). */
  url: string;
  pak: string;
  /** Where each value came from, for `brokkr config` and error messages. */
  sources: { url: string; pak: string };
}

export interface ConnectionFlags {
  url?: string;
  pak?: string;
}

interface FileConfig {
  url?: string;
  pak?: string;
}

/** `BROKKR_CONFIG`, else `$XDG_CONFIG_HOME/brokkr/config.yaml`, else `~/.config/brokkr/config.yaml`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): { path: string; explicit: boolean } {
  if (env.BROKKR_CONFIG) return { path: env.BROKKR_CONFIG, explicit: true };
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return { path: path.join(base, 'brokkr', 'config.yaml'), explicit: false };
}

/** The config file's `url` and `pak`; a missing default file is simply empty, a missing BROKKR_CONFIG is an error. */
export function readConfigFile(file: { path: string; explicit: boolean }): FileConfig {
  let text: string;
  try {
    text = fs.readFileSync(file.path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !file.explicit) return {};
    throw new CliError(`cannot read the config file ${file.path} (BROKKR_CONFIG): ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (err) {
    throw new CliError(`${file.path} is not valid YAML: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CliError(`${file.path}: expected a mapping with url and pak`);
  const { url, pak } = doc as Record<string, unknown>;
  for (const [key, value] of Object.entries({ url, pak })) {
    if (value !== undefined && typeof value !== 'string') throw new CliError(`${file.path}: ${key} must be a string`);
  }
  return { url: url as string | undefined, pak: pak as string | undefined };
}

/** Accepts the root URL or the API base (`…/api/v1`, as `npm start` prints it); returns the root. */
export function normaliseUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw.trim());
  } catch {
    throw new CliError(`invalid hub URL "${raw}": expected e.g. http://127.0.0.1:3000`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliError(`invalid hub URL "${raw}": use http:// or https://`);
  const base = parsed.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${parsed.origin}${base}`;
}

/** The first non-blank value and the name of its source. */
function pick(candidates: [string | undefined, string][]): [string, string] | undefined {
  for (const [value, source] of candidates) if (value && value.trim()) return [value.trim(), source];
  return undefined;
}

/** Flags, then BROKKR_URL / BROKKR_PAK, then the config file; a clear error naming all three when one is missing. */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const file = configPath(env);
  const fromFile = readConfigFile(file);
  const fileLabel = `config file ${file.path}`;
  const url = pick([
    [flags.url, '--url'],
    [env.BROKKR_URL, 'BROKKR_URL'],
    [fromFile.url, fileLabel],
  ]);
  if (!url) throw new CliError(`no hub URL: pass --url, set BROKKR_URL, or put "url: http://…" in ${file.path}`);
  const pak = pick([
    [flags.pak, '--pak'],
    [env.BROKKR_PAK, 'BROKKR_PAK'],
    [fromFile.pak, fileLabel],
  ]);
  if (!pak) throw new CliError(`no PAK: pass --pak, set BROKKR_PAK, or put "pak: brokkr_…" in ${file.path}`);
  return { url: normaliseUrl(url[0]), pak: pak[0], sources: { url: url[1], pak: pak[1] } };
}
