import pg from 'pg';
import { migrateLatest } from '@brokkr/db';

const MIGRATION_LOCK_KEY = 'brokkr.migrate';

/**
 * knex's migration lock only guards running migrations: two processes on an empty database both
 * try to create the `knex_migrations` table first and one fails. A session advisory lock on a
 * dedicated connection serialises the whole step across replicas (and across services that use
 * the same key).
 */
export async function migrateWithLock(settings: { url: string; schema?: string | undefined }): Promise<string[]> {
  const client = new pg.Client({ connectionString: settings.url, application_name: 'brokkr-api-migrate' });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    return await migrateLatest(settings);
  } finally {
    await client.end().catch(() => undefined);
  }
}
