import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams } from '@brokkr/bus';
import type { NatsHandle } from '@brokkr/infra';
import { createTestDatabase, eventually, startTestNats, type RunningService, type TestDatabase } from '@brokkr/testkit';
import { envelope, insertSubscription, publishEvents } from './support/fixtures.ts';
import { spawnDispatcher } from './support/replicas.ts';
import { startReceiver, type TestReceiver } from './support/receiver.ts';

interface Env {
  db: TestDatabase;
  nats: NatsHandle;
  nc: NatsConnection;
  pool: pg.Pool;
  receiver: TestReceiver;
  replicas: RunningService[];
}

async function setUp(): Promise<Env> {
  const db = await createTestDatabase();
  const nats = await startTestNats();
  const nc = await connect({ servers: nats.url });
  await ensureStreams(await jetstreamManager(nc));
  return { db, nats, nc, pool: new pg.Pool({ connectionString: db.url }), receiver: await startReceiver(), replicas: [] };
}

async function tearDown(env: Env | undefined): Promise<void> {
  if (!env) return;
  await Promise.allSettled(env.replicas.map((r) => r.kill()));
  await env.receiver.close();
  await env.pool.end();
  await env.nc.close();
  await env.nats.stop();
  await env.db.drop();
}

async function statusCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status');
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('webhook-dispatcher replicas', function () {
  this.timeout(240_000);

  describe('three replicas, 5,000 events, no faults', () => {
    let env: Env | undefined;
    after(() => tearDown(env));

    it('delivers every event exactly once', async () => {
      env = await setUp();
      await insertSubscription(env.pool, { url: env.receiver.url, eventTypes: ['stack.*'] });
      for (let i = 0; i < 3; i++) env.replicas.push(await spawnDispatcher({ db: env.db.url, nats: env.nats.url }));
      const events = Array.from({ length: 5000 }, (_, i) => envelope('stack.created', { stack_id: null, n: i }));
      await publishEvents(jetstream(env.nc), events);

      await eventually(async () => (await statusCounts(env!.pool)).success === 5000, { timeoutMs: 180_000, intervalMs: 500, what: '5000 successful deliveries' });
      // Let a hypothetical second send arrive before counting.
      await new Promise((r) => setTimeout(r, 2000));
      const receiver = env.receiver;
      expect(receiver.countById.size).to.equal(5000);
      expect([...receiver.countById.values()].every((n) => n === 1), 'some webhook-id arrived twice').to.equal(true);
      expect(events.every((e) => receiver.countById.get(e.id) === 1)).to.equal(true);
      const { rows } = await env.pool.query<{ n: number; a: number }>('SELECT count(*)::int AS n, max(attempts)::int AS a FROM webhook_deliveries');
      expect(rows[0]).to.deep.equal({ n: 5000, a: 1 });
      for (const replica of env.replicas) expect(await replica.stop()).to.equal(0);
    });
  });

  describe('kill -9 of one of two replicas mid-batch', () => {
    let env: Env | undefined;
    after(() => tearDown(env));

    /**
     * At the HTTP boundary at-least-once is the honest guarantee: a replica can die after the
     * receiver processed a POST but before the outcome is committed, and nobody can tell whether
     * that request arrived. The row is then still `acquired`; when its lease runs out another
     * replica sends it again. Every attempt carries the same `webhook-id` (the event id), so a
     * receiver that remembers the ids it processed turns this into exactly-once processing. What
     * must never happen — and what this test checks — is an event with no delivery row or a row
     * that never reaches a final state.
     */
    it('loses nothing: every event is delivered at least once and every delivery row completes', async () => {
      env = await setUp();
      env.receiver.respond = () => ({ status: 200, delayMs: 20 });
      await insertSubscription(env.pool, { url: env.receiver.url, eventTypes: ['*'], timeoutSeconds: 2 });
      const urls = { db: env.db.url, nats: env.nats.url };
      const settings = { BROKKR__BROKER__WEBHOOK_LEASE_SECONDS: '5' };
      env.replicas.push(await spawnDispatcher(urls, settings), await spawnDispatcher(urls, settings));
      const events = Array.from({ length: 3000 }, () => envelope('deployment.applied'));
      await publishEvents(jetstream(env.nc), events);

      await eventually(() => env!.receiver.requests.length >= 300, { timeoutMs: 60_000, what: 'deliveries under way' });
      await env.replicas[0]!.kill();
      const seenAtKill = env.receiver.requests.length;
      expect(seenAtKill).to.be.lessThan(3000, 'the replica should die mid-batch');

      await eventually(async () => (await statusCounts(env!.pool)).success === 3000, { timeoutMs: 180_000, intervalMs: 500, what: 'all 3000 deliveries' });
      const receiver = env.receiver;
      expect(events.every((e) => (receiver.countById.get(e.id) ?? 0) >= 1), 'an event was never delivered').to.equal(true);
      const { rows } = await env.pool.query<{ n: number; d: number }>('SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS d FROM webhook_deliveries');
      expect(rows[0]).to.deep.equal({ n: 3000, d: 3000 });
      const duplicates = [...receiver.countById.values()].filter((n) => n > 1).length;
      // Only POSTs in flight in the killed replica can have been sent twice.
      expect(duplicates).to.be.at.most(64);
      expect(await env.replicas[1]!.stop()).to.equal(0);
    });
  });
});
