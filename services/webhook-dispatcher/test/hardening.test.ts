import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { ensureStreams, publishCore, SUBJECTS } from '@brokkr/bus';
import {
  eventually,
  freePort,
  startWebhookReceiver,
  testOnlyNatsOptions,
  useTestInfra,
  type RunningService,
  type WebhookReceiver,
} from '@brokkr/testkit';
import { deliveries, envelope, insertSubscription, publishEvents, type SubscriptionSpec } from './support/fixtures.ts';
import { startInProcessDispatcher, type InProcessDispatcher } from './support/dispatcher.ts';
import { spawnDispatcher } from './support/replicas.ts';

const INTERRUPTED = /^Request interrupted: the lease expired/;

async function metric(dispatcher: InProcessDispatcher, name: string): Promise<number> {
  const found = dispatcher.metrics.getSingleMetric(name);
  if (!found) return 0;
  return (await found.get()).values.reduce((sum, v) => sum + v.value, 0);
}

/** What reached the database unchecked, and what a delivery's outcome may store. */
describe('webhook-dispatcher hardening', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let nc: NatsConnection;
  let js: JetStreamClient;
  let pool: pg.Pool;
  let dispatcher: InProcessDispatcher;
  let receiver: WebhookReceiver;

  before(async () => {
    nc = await connect(testOnlyNatsOptions(infra.nats));
    await ensureStreams(await jetstreamManager(nc));
    js = jetstream(nc);
    pool = new pg.Pool({ connectionString: infra.db.url });
    dispatcher = await startInProcessDispatcher({ db: infra.db.url, nats: infra.nats.url });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await dispatcher?.stop();
    await receiver?.close();
    await pool?.end();
    await nc?.close();
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
    const [row] = await eventually(
      async () => {
        const rows = await deliveries(pool, `event_id = $1 AND status IN ('success', 'dead')`, [eventId]);
        return rows.length === 1 ? rows : undefined;
      },
      { what: 'a final delivery state' },
    );
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

  /** A row as a dispatcher that died mid-POST leaves it: acquired by no agent, lease run out. */
  async function orphanedDelivery(subscriptionId: string, attempts: number): Promise<{ id: string; eventId: string }> {
    const event = envelope('stack.created');
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, status, attempts, acquired_until)
       VALUES ($1, 'stack.created', $2, $3, 'acquired', $4, now() - interval '1 second') RETURNING id`,
      [subscriptionId, event.id, JSON.stringify(event), attempts],
    );
    publishCore(nc, SUBJECTS.notifyDeliveries, {});
    return { id: rows[0]!.id, eventId: event.id };
  }

  it('counts the attempt a dead sender left in flight when it takes the row back, and sends it again', async () => {
    const sub = await subscribe({ eventTypes: ['nothing'], maxRetries: 3 });
    const orphan = await orphanedDelivery(sub.id, 1);
    const row = await finalRow(orphan.eventId);
    expect(row).to.include({ status: 'success', attempts: 3, last_error: null });
    expect(receiver.countById.get(orphan.eventId)).to.equal(1);
  });

  it('settles the row dead without sending it when the interrupted attempt was the last allowed one, and audits it', async () => {
    const sub = await subscribe({ eventTypes: ['nothing'], maxRetries: 2 });
    const orphan = await orphanedDelivery(sub.id, 1);
    const row = await finalRow(orphan.eventId);
    expect(row).to.include({ status: 'dead', attempts: 2 });
    expect(row.last_error).to.match(INTERRUPTED);
    expect(receiver.countById.get(orphan.eventId)).to.equal(undefined);
    const jsm = await jetstreamManager(nc);
    const audit = await eventually(
      async () => {
        const msg = await jsm.streams
          .getMessage('BROKKR_AUDIT', { last_by_subj: SUBJECTS.audit('webhook.delivery_failed') })
          .catch(() => null);
        const entry = msg?.json<{ details: { delivery_id: string; attempts: number; last_error: string } }>();
        return entry?.details.delivery_id === orphan.id ? entry : undefined;
      },
      { what: 'the webhook.delivery_failed audit entry' },
    );
    expect(audit.details.attempts).to.equal(2);
  });

  it("never stores the endpoint, control characters or a NUL in last_error (socket errors and receivers' bodies)", async () => {
    const closedPort = await freePort();
    const refused = await subscribe({ url: `http://127.0.0.1:${closedPort}/hook`, eventTypes: ['agent.registered'], maxRetries: 1 });
    receiver.respond = () => ({
      status: 500,
      body: `boom\u0000 upstream 10.0.0.7:5432 via http://internal.example/x at 127.0.0.1:${receiver.port}\r\n`,
    });
    const answered = await subscribe({ eventTypes: ['agent.deregistered'], maxRetries: 1 });
    const events = [envelope('agent.registered'), envelope('agent.deregistered')];
    await publishEvents(js, events);
    const rows = await Promise.all(events.map((e) => finalRow(e.id)));
    expect(rows.map((r) => r.subscription_id)).to.deep.equal([refused.id, answered.id]);
    expect(rows[0]!.last_error).to.match(/^Request failed: .*ECONNREFUSED.*<endpoint>/);
    expect(rows[1]!.last_error).to.equal('HTTP 500 Internal Server Error: boom  upstream <endpoint> via <url> at <endpoint>');
    for (const row of rows) {
      expect(row.status).to.equal('dead');
      expect(row.last_error).to.not.include('127.0.0.1').and.not.include(String(closedPort)).and.not.include(String(receiver.port));
    }
  });
});

/** The probe's case, with a real crash: the replica holding the POST is killed (SIGKILL), another one takes over. */
describe('webhook-dispatcher: a delivery sent again after a crash', function () {
  this.timeout(90_000);
  const infra = useTestInfra({ nats: true });
  let nc: NatsConnection;
  let pool: pg.Pool;
  let receiver: WebhookReceiver;
  let crashed: RunningService | undefined;
  let survivor: InProcessDispatcher | undefined;

  before(async () => {
    nc = await connect(testOnlyNatsOptions(infra.nats));
    await ensureStreams(await jetstreamManager(nc));
    pool = new pg.Pool({ connectionString: infra.db.url });
    // The first POST never gets an answer (the sender dies holding it); later ones succeed.
    receiver = await startWebhookReceiver((_req, nth) => (nth === 1 ? { hang: true } : { status: 200 }));
  });
  after(async () => {
    await crashed?.kill();
    await survivor?.stop();
    await receiver?.close();
    await pool?.end();
    await nc?.close();
  });

  it('counts both attempts: the one in flight when the sender died and the one that succeeded', async () => {
    await insertSubscription(pool, { url: receiver.url, eventTypes: ['stack.created'], timeoutSeconds: 1, maxRetries: 5 });
    const settings = { BROKKR__BROKER__WEBHOOK_LEASE_SECONDS: '5' };
    const urls = { db: infra.db.url, nats: infra.nats.url };
    crashed = await spawnDispatcher(urls, settings);
    const event = envelope('stack.created');
    await publishEvents(jetstream(nc), [event]);
    await receiver.waitFor(1, { where: (r) => r.webhookId === event.id, what: 'the first POST in flight' });
    await crashed.kill();
    survivor = await startInProcessDispatcher(urls, settings);
    // The lease (timeout + 10 s) has to run out before anyone may send it again.
    const [row] = await eventually(
      async () => {
        const rows = await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'success']);
        return rows.length === 1 ? rows : undefined;
      },
      { timeoutMs: 60_000, what: 'the delivery sent again and recorded' },
    );
    expect(receiver.countById.get(event.id)).to.equal(2);
    expect(row!.attempts).to.equal(2);
  });
});
