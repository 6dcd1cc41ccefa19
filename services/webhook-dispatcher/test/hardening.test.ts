import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { ensureStreams, publishCore, SUBJECTS } from '@brokkr/bus';
import type { NatsHandle } from '@brokkr/infra';
import { createTestDatabase, eventually, startTestNats, type TestDatabase } from '@brokkr/testkit';
import { deliveries, envelope, insertSubscription, publishEvents, type SubscriptionSpec } from './support/fixtures.ts';
import { startInProcessDispatcher, type InProcessDispatcher } from './support/dispatcher.ts';
import { startReceiver, type TestReceiver } from './support/receiver.ts';

async function metric(dispatcher: InProcessDispatcher, name: string): Promise<number> {
  const found = dispatcher.metrics.getSingleMetric(name);
  if (!found) return 0;
  return (await found.get()).values.reduce((sum, v) => sum + v.value, 0);
}

/** Issue 11: what reached the database unchecked, and what a delivery's outcome may store. */
describe('webhook-dispatcher hardening', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let nats: NatsHandle;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let pool: pg.Pool;
  let dispatcher: InProcessDispatcher;
  let receiver: TestReceiver;

  before(async () => {
    db = await createTestDatabase();
    nats = await startTestNats();
    nc = await connect({ servers: nats.url });
    await ensureStreams(await jetstreamManager(nc));
    js = jetstream(nc);
    pool = new pg.Pool({ connectionString: db.url });
    dispatcher = await startInProcessDispatcher({ db: db.url, nats: nats.url });
    receiver = await startReceiver();
  });
  after(async () => {
    await dispatcher?.stop();
    await receiver?.close();
    await pool?.end();
    await nc?.close();
    await nats?.stop();
    await db?.drop();
  });
  afterEach(async () => {
    await pool.query('DELETE FROM webhook_subscriptions');
    publishCore(nc, SUBJECTS.cacheInvalidate('webhooks'));
    receiver.respond = () => ({ status: 200 });
  });

  async function subscribe(spec: Partial<SubscriptionSpec> = {}) {
    const sub = await insertSubscription(pool, { url: receiver.url, ...spec });
    publishCore(nc, SUBJECTS.cacheInvalidate('webhooks'));
    await nc.flush();
    return sub;
  }

  async function finalRow(eventId: string) {
    const [row] = await eventually(async () => {
      const rows = await deliveries(pool, `event_id = $1 AND status IN ('success', 'dead')`, [eventId]);
      return rows.length === 1 ? rows : undefined;
    }, { what: 'a final delivery state' });
    return row!;
  }

  it('sends nothing for a stored auth header no client can send: dead after one attempt, not counted as a decrypt failure', async () => {
    const decryptFailuresBefore = await metric(dispatcher, 'brokkr_webhook_decrypt_failures_total');
    const events: { id: string }[] = [];
    for (const authHeader of ['Bearer a\nX-Injected: 1', 'Bearer \u0000', 'Bearer \u202Eabc', 'Bearer 😀']) {
      const event = envelope('stack.created');
      await subscribe({ authHeader, eventTypes: ['stack.created'], maxRetries: 5 });
      await publishEvents(js, [event]);
      events.push(event);
      const row = await finalRow(event.id);
      expect(row).to.include({ status: 'dead', attempts: 1 });
      expect(row.last_error).to.match(/auth header cannot be sent/);
      await pool.query('DELETE FROM webhook_subscriptions');
      publishCore(nc, SUBJECTS.cacheInvalidate('webhooks'));
    }
    expect(receiver.requests.filter((r) => events.some((e) => e.id === r.webhookId))).to.have.length(0);
    expect(await metric(dispatcher, 'brokkr_webhook_decrypt_failures_total')).to.equal(decryptFailuresBefore);
  });
});
