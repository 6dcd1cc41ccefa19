import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams } from '@brokkr/bus';
import { eventually, startWebhookReceiver, testOnlyNatsOptions, useTestInfra, type Responder, type WebhookReceiver } from '@brokkr/testkit';
import { deliveries, envelope, insertSubscription, invalidateSubscriptionCache, publishEvents } from './support/fixtures.ts';
import { startInProcessDispatcher, type InProcessDispatcher } from './support/dispatcher.ts';

/** Each block gets its own database, NATS server and dispatcher, so their settings differ freely. */
function isolated(env: Record<string, string>, stopGraceMs?: number) {
  const infra = useTestInfra({ nats: true });
  const ctx = { receivers: [] as WebhookReceiver[] } as {
    nc: NatsConnection;
    pool: pg.Pool;
    dispatcher: InProcessDispatcher;
    receivers: WebhookReceiver[];
  };
  before(async () => {
    ctx.nc = await connect(testOnlyNatsOptions(infra.nats));
    await ensureStreams(await jetstreamManager(ctx.nc));
    ctx.pool = new pg.Pool({ connectionString: infra.db.url });
    ctx.dispatcher = await startInProcessDispatcher({ db: infra.db.url, nats: infra.nats.url }, env, stopGraceMs);
  });
  after(async () => {
    await ctx.dispatcher?.stop().catch(() => undefined);
    await Promise.allSettled(ctx.receivers.map((r) => r.close()));
    await ctx.pool?.end();
    await ctx.nc?.close();
  });
  return ctx;
}

/** A receiver the block's `after` closes. */
async function receiverFor(ctx: { receivers: WebhookReceiver[] }, respond?: Responder): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver(respond);
  ctx.receivers.push(receiver);
  return receiver;
}

describe('webhook-dispatcher limits and safety', function () {
  this.timeout(60_000);

  describe('SSRF guard (private networks not allowed)', () => {
    const ctx = isolated({ BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });

    it('refuses 127.0.0.1 and names that resolve to loopback: dead at once, nothing sent', async () => {
      const receiver = await receiverFor(ctx);
      await insertSubscription(ctx.pool, { url: receiver.url, eventTypes: ['stack.created'] });
      await insertSubscription(ctx.pool, { url: `http://localhost:${receiver.port}/x`, eventTypes: ['stack.created'] });
      await insertSubscription(ctx.pool, { url: 'http://169.254.169.254/latest/meta-data', eventTypes: ['stack.created'] });
      const event = envelope('stack.created');
      await publishEvents(jetstream(ctx.nc), [event]);
      const dead = await eventually(async () => {
        const rows = await deliveries(ctx.pool, 'event_id = $1 AND status = $2', [event.id, 'dead']);
        return rows.length === 3 ? rows : undefined;
      });
      for (const row of dead) {
        expect(row.attempts).to.equal(1);
        expect(row.last_error).to.match(/private or reserved address/);
      }
      expect(receiver.requests).to.have.length(0);
    });
  });

  describe('per-endpoint concurrency', () => {
    const ctx = isolated({ BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY: '3', BROKKR__BROKER__WEBHOOK_CONCURRENCY: '8' }, 500);

    it('keeps a slow receiver to its share, so a fast one is served meanwhile', async () => {
      const slow = await receiverFor(ctx, () => ({ hang: true }));
      const fast = await receiverFor(ctx);
      await insertSubscription(ctx.pool, { url: slow.url, eventTypes: ['workorder.created'], timeoutSeconds: 30, maxRetries: 1 });
      await publishEvents(
        jetstream(ctx.nc),
        Array.from({ length: 20 }, () => envelope('workorder.created')),
      );
      await slow.waitFor(3, { what: 'the slow receiver saturated' });
      await insertSubscription(ctx.pool, { url: fast.url, eventTypes: ['workorder.claimed'] });
      await invalidateSubscriptionCache(ctx.nc);
      const fastEvents = Array.from({ length: 30 }, () => envelope('workorder.claimed'));
      await publishEvents(jetstream(ctx.nc), fastEvents);
      await eventually(() => fast.countById.size === 30, { what: 'the fast receiver served while the slow one hangs' });
      // Each slow request hangs until its 30 s timeout, so in that window only its share was sent.
      expect(slow.requests.length).to.equal(3);
    });
  });

  describe('graceful stop', () => {
    const ctx = isolated({}, 500);

    it('stops claiming and releases a POST still in flight after the grace period (counted as an attempt)', async () => {
      const receiver = await receiverFor(ctx, () => ({ hang: true }));
      await insertSubscription(ctx.pool, { url: receiver.url, eventTypes: ['stack.deleted'], timeoutSeconds: 30 });
      const event = envelope('stack.deleted');
      await publishEvents(jetstream(ctx.nc), [event]);
      await receiver.waitFor(1, { what: 'the POST in flight' });
      await ctx.dispatcher.stop();
      const [row] = await deliveries(ctx.pool, 'event_id = $1', [event.id]);
      // Handed back for another replica to send at once; the cut-short POST counts as an attempt.
      expect(row).to.include({ status: 'pending', attempts: 1 });
      expect(row!.last_error).to.match(/^Request interrupted: the dispatcher stopped/);
    });
  });
});
