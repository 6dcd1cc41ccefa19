/**
 * Mocha global fixture (loaded through .mocharc.cjs `require`): one PostgreSQL server per test
 * run (BROKKR__DATABASE__URL when given, else a throwaway cluster) and one migrated template
 * database that every test file clones (`createTestDatabase`). Cloning a template takes tens of
 * milliseconds, migrating takes seconds, so files stay isolated without paying for it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startPostgres, type PostgresHandle } from '@brokkr/infra';
import { migrateLatest } from '@brokkr/db';
import { withDatabase, TEMPLATE_ENV, SERVER_ENV } from './database.ts';

let server: PostgresHandle | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  server = await startPostgres({ url: process.env.BROKKR__DATABASE__URL });
  const template = `brokkr_tpl_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${template}"`);
  } finally {
    await admin.end();
  }
  await migrateLatest({ url: withDatabase(server.url, template) });
  process.env[SERVER_ENV] = server.url;
  process.env[TEMPLATE_ENV] = template;
}

export async function mochaGlobalTeardown(): Promise<void> {
  const template = process.env[TEMPLATE_ENV];
  if (server?.external && template) {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).finally(() => admin.end());
  }
  await server?.stop();
}
