import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { startPostgres, startNats } from '@brokkr/infra';
import { createTestDatabase, testOnlyNatsOptions, useTestInfra } from '../src/index.ts';

describe('test harness', () => {
  const infra = useTestInfra({ nats: true });

  it('gives each file a migrated database of its own', async () => {
    const other = await createTestDatabase();
    const a = new pg.Client({ connectionString: infra.db.url });
    const b = new pg.Client({ connectionString: other.url });
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query('CREATE TABLE only_in_a (id int)');
      const seen = await b.query(`SELECT to_regclass('only_in_a') AS t`);
      expect(seen.rows[0].t).to.equal(null);
      const tables = await b.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'knex_migrations'`);
      expect(tables.rows[0].n).to.equal(1);
    } finally {
      await Promise.all([a.end(), b.end()]);
      await other.drop();
    }
  });

  it('eight concurrent claimers with FOR UPDATE SKIP LOCKED take every row exactly once', async () => {
    const setup = new pg.Client({ connectionString: infra.db.url });
    await setup.connect();
    await setup.query('CREATE TABLE jobs (id serial PRIMARY KEY, claimed_by int)');
    await setup.query('INSERT INTO jobs (claimed_by) SELECT NULL FROM generate_series(1, 2000)');
    await setup.end();

    const claimer = async (worker: number): Promise<number[]> => {
      const c = new pg.Client({ connectionString: infra.db.url });
      await c.connect();
      const mine: number[] = [];
      for (;;) {
        const r = await c.query<{ id: number }>(
          `UPDATE jobs SET claimed_by = $1 WHERE id IN (
             SELECT id FROM jobs WHERE claimed_by IS NULL ORDER BY id LIMIT 25 FOR UPDATE SKIP LOCKED
           ) RETURNING id`,
          [worker],
        );
        if (r.rowCount === 0) break;
        mine.push(...r.rows.map((row) => row.id));
      }
      await c.end();
      return mine;
    };
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => claimer(i + 1)));
    const all = results.flat();
    expect(all).to.have.length(2000);
    expect(new Set(all).size).to.equal(2000);
    expect(results.filter((r) => r.length > 0).length).to.be.greaterThan(1);
  });

  it('a JetStream message published twice with the same id is stored once', async () => {
    const nc = await connect(testOnlyNatsOptions(infra.nats));
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'HARNESS', subjects: ['harness.>'], duplicate_window: 120_000_000_000 });
      const js = jetstream(nc);
      const first = await js.publish('harness.a', 'x', { msgID: 'same-id' });
      const second = await js.publish('harness.a', 'x', { msgID: 'same-id' });
      expect(first.duplicate).to.equal(false);
      expect(second.duplicate).to.equal(true);
      expect((await jsm.streams.info('HARNESS')).state.messages).to.equal(1);
    } finally {
      await nc.close();
    }
  });

  it('stopping a throwaway server leaves no process and no directory behind', async () => {
    const server = await startPostgres();
    const nats = await startNats();
    expect(existsSync(server.dir ?? '')).to.equal(true);
    expect(existsSync(nats.dir ?? '')).to.equal(true);
    await Promise.all([server.stop(), nats.stop()]);
    const ps = execSync('ps -eo args').toString();
    expect(ps).to.not.include(`-p ${new URL(server.url).port} `);
    expect(ps).to.not.include(`-p ${nats.port} `);
    expect(existsSync(server.dir ?? '')).to.equal(false);
    expect(existsSync(nats.dir ?? '')).to.equal(false);
  });
});
