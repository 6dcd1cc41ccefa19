/**
 * The test run's one PostgreSQL server (BROKKR__DATABASE__URL when given, else a throwaway
 * cluster) and its migrated template database, started when the run first asks for a database:
 * a run whose files need none (most of the shared packages' runs) starts no PostgreSQL at all.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startPostgres, type PostgresHandle } from '@brokkr/infra';
import { migrateLatest } from '@brokkr/db';

export const SERVER_ENV = 'BROKKR_TEST_PG_URL';
export const TEMPLATE_ENV = 'BROKKR_TEST_PG_TEMPLATE';

export interface TestPostgres {
  /** Superuser URL of the server's `postgres` database. */
  url: string;
  /** The migrated template every test database is cloned from. */
  template: string;
}

let started: Promise<{ server: PostgresHandle; template: string }> | undefined;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function start(): Promise<{ server: PostgresHandle; template: string }> {
  const server = await startPostgres({ url: process.env.BROKKR__DATABASE__URL });
  const template = `brokkr_tpl_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${template}"`);
  } finally {
    await admin.end();
  }
  await migrateLatest({ url: withDatabase(server.url, template) });
  // For tests that reach the server itself (shared/testkit/test/infra.test.ts).
  process.env[SERVER_ENV] = server.url;
  process.env[TEMPLATE_ENV] = template;
  return { server, template };
}

/** The server and template, started and migrated on the first call of the run. */
export async function testPostgres(): Promise<TestPostgres> {
  started ??= start();
  const { server, template } = await started;
  return { url: server.url, template };
}

/** Drops the template of an outside server and stops a throwaway one; nothing when none was started. */
export async function stopTestPostgres(): Promise<void> {
  if (!started) return;
  const { server, template } = await started;
  started = undefined;
  if (server.external) {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).finally(() => admin.end());
  }
  await server.stop();
}
