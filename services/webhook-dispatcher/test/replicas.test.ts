import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams } from '@brokkr/bus';
import {
  eventually,
  startWebhookReceiver,
  testOnlyNatsOptions,
  useTestInfra,
  type RunningService,
  type WebhookReceiver,
} from '@brokkr/testkit';
import { envelope, insertSubscription, publishEvents } from './support/fixtures.ts';
import { spawnDispatcher } from './support/replicas.ts';

async function statusCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status',
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('webhook-dispatcher replicas', function () {
  this.timeout(240_000);
  // Every test gets a database and NATS server of its own, with its own replicas and receiver.
  const infra = useTestInfra({ nats: true, each: true });
  let nc: NatsConnection;
  let pool: pg.Pool;
  let receiver: WebhookReceiver;
  let replicas: RunningService[];
  const urls = () => ({ db: infra.db.url, nats: infra.nats.url });

  beforeEach(async () => {
    replicas = [];
    nc = await connect(testOnlyNatsOptions(infra.nats));
    await ensureStreams(await jetstreamManager(nc));
    pool = new pg.Pool({ connectionString: infra.db.url });
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await Promise.allSettled(replicas.map((r) => r.kill()));
    await receiver?.close();
    await pool?.end();
    await nc?.close();
  });

  describe('three replicas, 5,000 events, no faults', () => {
    it('delivers every event exactly once', async () => {
      await insertSubscription(pool, { url: receiver.url, eventTypes: ['stack.*'] });
      for (let i = 0; i < 3; i++) replicas.push(await spawnDispatcher(urls()));
      const events = Array.from({ length: 5000 }, (_, i) => envelope('stack.created', { stack_id: null, n: i }));
      await publishEvents(jetstream(nc), events);

      await eventually(async () => (await statusCounts(pool)).success === 5000, {
        timeoutMs: 180_000,
        intervalMs: 500,
        what: '5000 successful deliveries',
      });
      // A row recorded as a success is never claimed again, so a second send could only be a POST
      // already under way. Before counting, an event published now is delivered: the replicas have
      // claimed and sent past those 5000.
      const marker = envelope('stack.deleted');
      await publishEvents(jetstream(nc), [marker]);
      await receiver.waitFor(1, { where: (r) => r.webhookId === marker.id, what: 'the later marker event' });
      const counts = new Map([...receiver.countById].filter(([id]) => id !== marker.id));
      expect(counts.size).to.equal(5000);
      expect(
        [...counts.values()].every((n) => n === 1),
        'some webhook-id arrived twice',
      ).to.equal(true);
      expect(events.every((e) => counts.get(e.id) === 1)).to.equal(true);
      const { rows } = await pool.query<{ n: number; a: number }>(
        'SELECT count(*)::int AS n, max(attempts)::int AS a FROM webhook_deliveries WHERE event_id <> $1',
        [marker.id],
      );
      expect(rows[0]).to.deep.equal({ n: 5000, a: 1 });
      for (const replica of replicas) expect(await replica.stop()).to.equal(0);
    });
  });

  describe('kill -9 of one of two replicas mid-batch', () => {
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
      receiver.respond = () => ({ status: 200, delayMs: 20 });
      await insertSubscription(pool, { url: receiver.url, eventTypes: ['*'], timeoutSeconds: 2 });
      const settings = { BROKKR__BROKER__WEBHOOK_LEASE_SECONDS: '5' };
      replicas.push(await spawnDispatcher(urls(), settings), await spawnDispatcher(urls(), settings));
      const events = Array.from({ length: 3000 }, () => envelope('deployment.applied'));
      await publishEvents(jetstream(nc), events);

      await receiver.waitFor(300, { timeoutMs: 60_000, what: 'deliveries under way' });
      await replicas[0]!.kill();
      const seenAtKill = receiver.requests.length;
      expect(seenAtKill).to.be.lessThan(3000, 'the replica should die mid-batch');

      await eventually(async () => (await statusCounts(pool)).success === 3000, {
        timeoutMs: 180_000,
        intervalMs: 500,
        what: 'all 3000 deliveries',
      });
      expect(
        events.every((e) => (receiver.countById.get(e.id) ?? 0) >= 1),
        'an event was never delivered',
      ).to.equal(true);
      const { rows } = await pool.query<{ n: number; d: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS d FROM webhook_deliveries',
      );
      expect(rows[0]).to.deep.equal({ n: 3000, d: 3000 });
      const duplicates = [...receiver.countById.values()].filter((n) => n > 1).length;
      // Only POSTs in flight in the killed replica can have been sent twice.
      expect(duplicates).to.be.at.most(64);
      expect(await replicas[1]!.stop()).to.equal(0);
    });
  });
});
