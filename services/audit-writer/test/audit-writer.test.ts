import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams, SUBJECTS } from '@brokkr/bus';
import { eventually, freePort, spawnService, testOnlyNatsOptions, useTestInfra } from '@brokkr/testkit';

function entry(i: number) {
  return {
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    actor_type: 'admin',
    actor_id: null,
    action: 'stack.created',
    resource_type: 'stack',
    resource_id: randomUUID(),
    details: { name: `stack-${i}` },
  };
}

describe('audit-writer', () => {
  const infra = useTestInfra({ nats: true });
  let nc: NatsConnection;
  let pool: pg.Pool;

  before(async () => {
    nc = await connect(testOnlyNatsOptions(infra.nats));
    await ensureStreams(await jetstreamManager(nc));
    pool = new pg.Pool({ connectionString: infra.db.url });
  });
  after(async () => {
    await pool?.end();
    await nc?.close();
  });

  const count = async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_logs')).rows[0]?.n ?? 0;
  const start = async () => {
    const port = await freePort();
    return spawnService({
      service: 'audit-writer',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__HEALTH__PORT: String(port),
        BROKKR__AUDIT__BATCH_SIZE: '50',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
  };
  const publish = async (entries: ReturnType<typeof entry>[]) => {
    const js = jetstream(nc);
    await Promise.all(entries.map((e) => js.publish(SUBJECTS.audit(e.action), JSON.stringify(e), { msgID: e.id })));
  };

  it('writes every entry exactly once even when killed mid-batch', async () => {
    const entries = Array.from({ length: 3000 }, (_, i) => entry(i));
    await publish(entries);
    const first = await start();
    await eventually(async () => (await count()) > 0, { what: 'the first batch' });
    await first.kill();
    const written = await count();
    expect(written).to.be.lessThan(3000, 'the writer should have been killed before finishing');

    const second = await start();
    await eventually(async () => (await count()) === 3000, { timeoutMs: 60_000, what: 'all 3000 entries' });
    // Entries committed but not acknowledged before the kill are redelivered to the second
    // writer; wait until it has seen all of them (no pending acks) and check none was doubled.
    await eventually(
      async () => {
        const info = await (await jetstreamManager(nc)).consumers.info('BROKKR_AUDIT', 'audit-writer');
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      { timeoutMs: 60_000, what: 'the consumer to drain' },
    );
    const rows = await pool.query<{ n: number; d: number }>('SELECT count(*)::int AS n, count(DISTINCT id)::int AS d FROM audit_logs');
    expect(rows.rows[0]).to.deep.equal({ n: 3000, d: 3000 });
    const ids = new Set((await pool.query<{ id: string }>('SELECT id FROM audit_logs')).rows.map((r) => r.id));
    expect(entries.every((e) => ids.has(e.id))).to.equal(true);
    expect(await second.stop()).to.equal(0);
  });

  it('absorbs an entry the api already wrote directly (NATS fallback) and drops malformed messages', async () => {
    const direct = entry(1);
    await pool.query(
      `INSERT INTO audit_logs (id, timestamp, actor_type, action, resource_type, details) VALUES ($1, $2, 'admin', 'stack.created', 'stack', '{}')`,
      [direct.id, direct.timestamp],
    );
    const before = await count();
    const writer = await start();
    const js = jetstream(nc);
    await js.publish(SUBJECTS.audit('stack.created'), 'not json', { msgID: randomUUID() });
    const fresh = entry(2);
    await publish([direct, fresh]);
    await eventually(async () => (await count()) === before + 1, { what: 'the fresh entry' });
    const dup = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_logs WHERE id = $1', [direct.id]);
    expect(dup.rows[0]?.n).to.equal(1);
    expect(await writer.stop()).to.equal(0);
  });
});
