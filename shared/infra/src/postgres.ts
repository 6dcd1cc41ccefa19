import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';
import { startGuarded } from './guarded-process.ts';
import { scriptsDir } from './paths.ts';

const exec = promisify(execFile);
const NOBODY = 65534;

export interface PostgresHandle {
  /** Superuser URL of the `postgres` database. */
  url: string;
  /** True when BROKKR__DATABASE__URL pointed at an existing server (we then start and stop nothing). */
  external: boolean;
  /** The temporary directory holding the cluster (removed on stop); undefined when external. */
  dir?: string;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** An existing server to use instead of starting one (usually BROKKR__DATABASE__URL). */
  url?: string | undefined;
  log?: (line: string) => void;
  /** Extra server settings (`-c name=value`), e.g. shared_preload_libraries for a benchmark. */
  settings?: Record<string, string>;
}

/** Uses the given server, or starts a throwaway cluster on a free port in a temporary directory. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresHandle> {
  if (options.url) return { url: options.url, external: true, stop: async () => undefined };
  const bin = await findPostgresBin();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await fs.chown(dir, NOBODY, NOBODY);
  const data = path.join(dir, 'data');
  const initdbArgs = ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'];
  await exec(
    asRoot ? 'setpriv' : path.join(bin, 'initdb'),
    asRoot ? ['--reuid=65534', '--regid=65534', '--clear-groups', '--', path.join(bin, 'initdb'), ...initdbArgs] : initdbArgs,
    { cwd: dir },
  );
  const port = await freePort();
  // Durability settings are off: these clusters are throwaway and live in a temp directory.
  const server = startGuarded({
    command: path.join(bin, 'postgres'),
    args: [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-h',
      '127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=400',
      '-c',
      'shared_buffers=128MB',
      '-c',
      'log_min_messages=warning',
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    dir,
    ...(asRoot ? { runAs: NOBODY } : {}),
    ...(options.log ? { onOutput: options.log } : {}),
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitForPostgres(url);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { url, external: false, dir, stop: () => server.stop() };
}

async function waitForPostgres(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections within ${timeoutMs} ms`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Finds the server binaries (Debian keeps them out of PATH); installs them with apt when missing. */
export async function findPostgresBin(): Promise<string> {
  const found = locatePostgresBin();
  if (found) return found;
  await exec('bash', [path.join(scriptsDir, 'lib', 'install-postgres.sh')], { maxBuffer: 64 * 1024 * 1024 });
  const installed = locatePostgresBin();
  if (!installed) throw new Error('PostgreSQL server binaries not found after installation');
  return installed;
}

function locatePostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'postgres'))) return path.join(root, v, 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(path.join(dir, 'postgres')) && existsSync(path.join(dir, 'initdb'))) return dir;
  }
  return undefined;
}
