import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexFactory from 'knex';

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

/** Applies every pending migration; returns the names it applied. Safe to run concurrently (knex locks). */
export async function migrateLatest(options: MigrateOptions): Promise<string[]> {
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
