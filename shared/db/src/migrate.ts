import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexFactory from 'knex';
import pg from 'pg';

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

const MIGRATION_LOCK_KEY = 'brokkr.migrate';

/**
 * Applies every pending migration; returns the names it applied. Safe to run from every replica
 * at once: knex's own lock only guards running migrations, and two processes on an empty database
 * would both try to create `knex_migrations`; a session advisory lock held on a dedicated
 * connection serialises the whole step.
 */
export async function migrateLatest(options: MigrateOptions): Promise<string[]> {
  const lock = new pg.Client({ connectionString: options.url, application_name: 'brokkr-migrate' });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    return await applyMigrations(options);
  } finally {
    // Ending the session releases the advisory lock.
    await lock.end().catch(() => undefined);
  }
}

async function applyMigrations(options: MigrateOptions): Promise<string[]> {
  const knex = knexFactory({
    client: 'pg',
    connection: options.url,
    searchPath: options.schema ? [options.schema, 'public'] : undefined,
    pool: { min: 0, max: 2 },
  });
  try {
    if (options.schema) await knex.raw(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
    const [, applied] = (await knex.migrate.latest({
      directory: migrationsDirectory(),
      loadExtensions: ['.ts', '.js'],
      schemaName: options.schema,
      tableName: 'knex_migrations',
    })) as [number, string[]];
    return applied;
  } finally {
    await knex.destroy();
  }
}
