import { expect } from 'chai';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { testOnlyNatsOptions, useTestInfra, type TestInfra } from '../src/index.ts';

const SERVER_ENV = 'BROKKR_TEST_PG_URL';

async function databaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: process.env[SERVER_ENV] });
  await admin.connect();
  try {
    return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
}

const errorOf = (read: () => unknown): string => {
  try {
    read();
    return 'no error';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('useTestInfra', () => {
  let inner: TestInfra;
  let dbName = '';
  let readTooEarly = '';
  let closedInOwnAfter = false;

  describe('a block with a database and NATS', () => {
    inner = useTestInfra({ nats: true });
    readTooEarly = errorOf(() => inner.db);
    let pool: pg.Pool;

    before(() => {
      pool = new pg.Pool({ connectionString: inner.db.url, max: 2 });
      dbName = inner.db.name;
    });
    // Declared after useTestInfra, yet it runs before the teardown: the pool can still talk to its database.
    after(async () => {
      await pool.query('SELECT 1');
      await pool.end();
      closedInOwnAfter = true;
    });

    it('explains a read before the before hook ran', () => {
      expect(readTooEarly).to.match(/infra\.db was read before its before hook ran/);
    });

    it('clones the migrated template', async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'knex_migrations'`,
      );
      expect(rows[0]?.n).to.equal(1);
      expect(await pool.query('SELECT current_database() AS name')).to.have.nested.property('rows[0].name', inner.db.name);
    });

    it('restarts NATS on the same port, keeping the JetStream store', async () => {
      const nc = await connect(testOnlyNatsOptions(inner.nats));
      await (await jetstreamManager(nc)).streams.add({ name: 'KEPT', subjects: ['kept.>'] });
      await nc.close();
      const port = inner.nats.port;
      await inner.nats.stop();
      await inner.restartNats();
      expect(inner.nats.port).to.equal(port);
      const again = await connect(testOnlyNatsOptions(inner.nats));
      try {
        expect((await (await jetstreamManager(again)).streams.info('KEPT')).config.subjects).to.deep.equal(['kept.>']);
      } finally {
        await again.close();
      }
    });
  });

  describe('a block without NATS', () => {
    const infra = useTestInfra();
    it('says so when NATS is read', () => {
      expect(errorOf(() => infra.nats)).to.match(/infra\.nats was not asked for/);
      expect(infra.db.url).to.match(/^postgres/);
    });
  });

  describe('each: true, db: empty', () => {
    const infra = useTestInfra({ db: 'empty', each: true });
    const names: string[] = [];
    it('gives the first test an empty database', async () => {
      names.push(infra.db.name);
      const client = new pg.Client({ connectionString: infra.db.url });
      await client.connect();
      const { rows } = await client.query(`SELECT to_regclass('knex_migrations') AS t`).finally(() => client.end());
      expect(rows[0].t).to.equal(null);
    });
    it('and the next one another, the first one dropped', async () => {
      names.push(infra.db.name);
      expect(names[1]).to.not.equal(names[0]);
      expect(await databaseExists(names[0]!)).to.equal(false);
    });
  });

  after(async () => {
    expect(closedInOwnAfter).to.equal(true);
    expect(await databaseExists(dbName), 'dropped by the teardown').to.equal(false);
    expect(errorOf(() => inner.db)).to.match(/after the teardown/);
  });
});
