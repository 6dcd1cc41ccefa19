/**
 * Mocha global fixture of the full tier (loaded through .mocharc.cjs `require`): one PostgreSQL
 * server per test run (BROKKR__DATABASE__URL when given, else a throwaway cluster) and one migrated
 * template database that every test file clones (`createTestDatabase`). Cloning a template takes
 * tens of milliseconds, migrating takes seconds, so files stay isolated without paying for it.
 *
 * It also records the run (run-record.ts): which file started what infrastructure, including every
 * child process; at the end a file in the wrong tier fails the run, and BROKKR_TEST_TIMES gets
 * the time each file took.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startPostgres, type PostgresHandle } from '@brokkr/infra';
import { migrateLatest } from '@brokkr/db';
import { withDatabase, TEMPLATE_ENV, SERVER_ENV } from './database.ts';
import { guardChildProcesses } from './child-processes.ts';
import { recordRun, tierMistakes, writeTimes } from './run-record.ts';

// Before any test file loads, so that their promisify(execFile) wraps the guard.
guardChildProcesses();

let server: PostgresHandle | undefined;

/** `this` is mocha's runner; a benchmark that borrows the fixture calls it without one. */
export async function mochaGlobalSetup(this: Mocha.Runner | void): Promise<void> {
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
  // From here on, what starts is a test file's.
  if (this) recordRun(this);
}

export async function mochaGlobalTeardown(this: Mocha.Runner | void): Promise<void> {
  writeTimes();
  const template = process.env[TEMPLATE_ENV];
  if (server?.external && template) {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).finally(() => admin.end());
  }
  await server?.stop();
  if (!this) return;
  const mistakes = tierMistakes(this.suite);
  if (mistakes.length > 0) throw new Error(`test files in the wrong tier (docs/adr/0042-fast-test-tier.md):\n  ${mistakes.join('\n  ')}`);
}
