import { fork } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { ChildReply } from './migrate-child.ts';

/**
 * The forward-only migrations live at the repository root (`migrations/`), shared by every service.
 * They are plain, erasable TypeScript so Node >= 22.18 loads them without a build step.
 */
export function migrationsDirectory(): string {
  if (process.env.BROKKR_MIGRATIONS_DIR) return process.env.BROKKR_MIGRATIONS_DIR;
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, '../../../migrations');
}

export interface MigrateOptions {
  url: string;
  schema?: string | undefined;
}

export const MIGRATION_EXTENSIONS = ['.ts', '.js'];
export const MIGRATIONS_TABLE = 'knex_migrations';
const MIGRATION_LOCK_KEY = 'brokkr.migrate';

// The child runs the same kind of file as this module: .ts under tsx (tests), .js once built.
const CHILD_PATH = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './migrate-child.ts' : './migrate-child.js', import.meta.url));

/**
 * Applies every pending migration; returns the names it applied. Safe to run from every replica
 * at once: knex's own lock only guards running migrations, and two processes on an empty database
 * would both try to create `knex_migrations`; a session advisory lock held on a dedicated
 * connection serialises the whole step.
 *
 * When nothing is pending (every restart but the first after an upgrade) one query says so and
 * knex is never loaded. Otherwise knex runs in a short-lived child process: importing the .ts
 * migrations loads node's TypeScript stripper (its source and WebAssembly, ~17 MiB), and knex
 * with lodash; none of it could be unloaded from a long-running service (ADR 0026).
 */
export async function migrateLatest(options: MigrateOptions): Promise<string[]> {
  const lock = new pg.Client({ connectionString: options.url, application_name: 'brokkr-migrate' });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    if (await upToDate(lock, options.schema)) return [];
    return await migrateInChildProcess(options);
  } finally {
    // Ending the session releases the advisory lock.
    await lock.end().catch(() => undefined);
  }
}

/**
 * Every migration file is recorded as applied and every recorded one still exists (anything else,
 * including knex's own "corrupt directory" case, is left to knex to apply or to report).
 */
async function upToDate(client: pg.Client, schema: string | undefined): Promise<boolean> {
  const table = schema ? `${pg.escapeIdentifier(schema)}.${MIGRATIONS_TABLE}` : MIGRATIONS_TABLE;
  const { rows } = await client.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [table]);
  if (!rows[0]?.exists) return false;
  const applied = new Set((await client.query<{ name: string }>(`SELECT name FROM ${table}`)).rows.map((r) => r.name));
  const files = (await readdir(migrationsDirectory())).filter((f) => MIGRATION_EXTENSIONS.includes(path.extname(f)));
  return files.length === applied.size && files.every((f) => applied.has(f));
}

/**
 * Node flags the child needs to load the same code (a loader such as tsx, export conditions,
 * experimental switches); profiling, inspector and heap flags stay with the service.
 */
function loadingFlags(execArgv: readonly string[]): string[] {
  const withValue = ['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C'];
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (withValue.includes(arg)) kept.push(arg, execArgv[++i] ?? '');
    else if (withValue.some((flag) => arg.startsWith(`${flag}=`)) || /^--(no-)?experimental-[a-z-]+$/.test(arg)) kept.push(arg);
  }
  return kept;
}

function migrateInChildProcess(options: MigrateOptions): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD_PATH, [], { execArgv: loadingFlags(process.execArgv), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (reply: ChildReply) => {
      if ('applied' in reply) resolve(reply.applied);
      else reject(Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {}));
    });
    child.on('error', reject);
    // After an answer this changes nothing (a settled promise stays settled).
    child.on('close', (code, signal) =>
      reject(new Error(`the migration process ended (${signal ?? `exit code ${code}`}) without an answer`)),
    );
    child.send(options);
  });
}
