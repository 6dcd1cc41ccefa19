import knexFactory from 'knex';
import { MIGRATION_EXTENSIONS, MIGRATIONS_TABLE, migrationsDirectory, type MigrateOptions } from './migrate.ts';

/**
 * Runs knex's migrator: every pending file of migrations/ in order. Only the migration child
 * process (migrate-child.ts) imports this module, so knex, lodash and node's TypeScript stripper
 * (which the .ts migrations need) never load into a service process (ADR 0026).
 */
export async function applyMigrations(options: MigrateOptions): Promise<string[]> {
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
      loadExtensions: [...MIGRATION_EXTENSIONS],
      schemaName: options.schema,
      tableName: MIGRATIONS_TABLE,
    })) as [number, string[]];
    return applied;
  } finally {
    await knex.destroy();
  }
}
