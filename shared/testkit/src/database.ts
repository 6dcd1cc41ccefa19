import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testPostgres, withDatabase } from './postgres-server.ts';
import { timedStop, usingInfrastructure } from './tier.ts';

export { withDatabase };

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: (await testPostgres()).url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Drops a test database. Connections a test has just closed can still be on their way out
 * (pg-pool's end() resolves before every socket is gone); a FORCE drop would kill them and the
 * client would see an uncaught "terminating connection" error. So try a plain drop for a couple
 * of seconds first, and force only what is really left open.
 */
async function dropDatabase(name: string): Promise<void> {
  const deadline = Date.now() + 3000;
  await admin(async (c) => {
    for (;;) {
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}"`);
        return;
      } catch (err) {
        const inUse = (err as { code?: string }).code === '55006';
        if (!inUse) throw err;
        if (Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/** A fresh database cloned from the migrated template; drop it in `after`. */
export function createTestDatabase(): Promise<TestDatabase> {
  return usingInfrastructure('database', cloneTemplate);
}

async function cloneTemplate(): Promise<TestDatabase> {
  const { url, template } = await testPostgres();
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return {
    name,
    url: withDatabase(url, name),
    drop: timedStop('database', () => dropDatabase(name)),
  };
}

/** An empty database (no migrations), for tests of the migrations themselves. */
export function createEmptyDatabase(): Promise<TestDatabase> {
  return usingInfrastructure('database', createEmpty);
}

async function createEmpty(): Promise<TestDatabase> {
  const { url } = await testPostgres();
  const name = `e_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  return {
    name,
    url: withDatabase(url, name),
    drop: timedStop('database', () => dropDatabase(name)),
  };
}
