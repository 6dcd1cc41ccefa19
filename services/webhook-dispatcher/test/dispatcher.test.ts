import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { Webhook } from 'standardwebhooks';
import { ensureStreams, publishCore, SUBJECTS } from '@brokkr/bus';
import {
  eventually,
  startWebhookReceiver,
  testOnlyNatsOptions,
  useTestInfra,
  type ReceivedRequest,
  type WebhookReceiver,
} from '@brokkr/testkit';
import { deliveries, envelope, insertSubscription, publishEvents, type SubscriptionSpec } from './support/fixtures.ts';
import { startInProcessDispatcher, type InProcessDispatcher } from './support/dispatcher.ts';

const withId = (id: string) => (r: ReceivedRequest) => r.webhookId === id;

describe('webhook-dispatcher: matching, delivery, retries', function () {
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
    // Subscriptions of one test must not match the next test's events.
    await pool.query('DELETE FROM webhook_subscriptions');
    publishCore(nc, SUBJECTS.cacheInvalidate('webhooks'));
    receiver.respond = () => ({ status: 200 });
  });

  async function subscribe(spec: Partial<SubscriptionSpec> = {}) {
    const sub = await insertSubscription(pool, { url: receiver.url, ...spec });
    // What the api publishes after every subscription change.
    publishCore(nc, SUBJECTS.cacheInvalidate('webhooks'));
    await nc.flush();
    return sub;
  }

  /**
   * Shows that a claim pass has run since now: a hub row of another enabled subscription falls due
   * (a stack.deleted event only it matches) and is delivered. Rows that were due before it are
   * older, so that pass saw them too.
   */
  async function claimPassSinceNow(): Promise<void> {
    await subscribe({ eventTypes: ['stack.deleted'] });
    const marker = envelope('stack.deleted');
    await publishEvents(js, [marker]);
    await receiver.waitFor(1, { where: withId(marker.id), what: 'a later delivery of another subscription' });
  }

  it('delivers an event once, with the stored payload, the auth header and a verifiable Standard Webhooks signature', async () => {
    const sub = await subscribe({ authHeader: 'Bearer receiver-token' });
    const event = envelope('stack.created', { stack_id: '7b0c6f1e-8a53-4b5e-9a59-3c9c1a0b2d11', name: 's1' });
    await publishEvents(js, [event]);
    const got = (await receiver.waitFor(1, { where: withId(event.id), what: 'the webhook POST' }))[0]!;
    expect(got.headers['content-type']).to.equal('application/json');
    expect(got.headers.authorization).to.equal('Bearer receiver-token');
    expect(JSON.parse(got.body)).to.deep.equal(event);
    expect(Object.keys(JSON.parse(got.body))).to.deep.equal(['id', 'event_type', 'timestamp', 'data']);
    // Verified by the reference Standard Webhooks library, not by our own code.
    const verified = new Webhook(sub.secret).verify(got.body, got.headers as Record<string, string>);
    expect(verified).to.deep.equal(event);
    const [row] = await eventually(async () => {
      const rows = await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'success']);
      return rows.length === 1 ? rows : undefined;
    });
    expect(row!.attempts).to.equal(1);
    expect(row!.payload).to.equal(got.body);
  });

  it('matches patterns (*, prefix.*, exact) and filters; unparseable filters and disabled subscriptions match nothing', async () => {
    const stackId = '11111111-2222-4333-8444-555555555555';
    const subs = {
      all: await subscribe({ eventTypes: ['*'] }),
      prefix: await subscribe({ eventTypes: ['stack.*'] }),
      exact: await subscribe({ eventTypes: ['stack.deleted'] }),
      otherType: await subscribe({ eventTypes: ['agent.registered', 'deployment.*'] }),
      filterHit: await subscribe({ eventTypes: ['*'], filters: JSON.stringify({ stack_id: stackId.toUpperCase() }) }),
      filterMiss: await subscribe({ eventTypes: ['*'], filters: JSON.stringify({ stack_id: '99999999-2222-4333-8444-555555555555' }) }),
      filterBoth: await subscribe({
        eventTypes: ['*'],
        filters: JSON.stringify({ stack_id: stackId, agent_id: '99999999-2222-4333-8444-555555555555' }),
      }),
      filterEmpty: await subscribe({ eventTypes: ['*'], filters: '{}' }),
      unparseable: await subscribe({ eventTypes: ['*'], filters: '{not json' }),
      disabled: await subscribe({ eventTypes: ['*'], enabled: false }),
      prefixNoDot: await subscribe({ eventTypes: ['stac.*'] }),
    };
    const event = envelope('stack.deleted', { stack_id: stackId, deleted_at: new Date().toISOString() });
    await publishEvents(js, [event]);
    const expected = [subs.all, subs.prefix, subs.exact, subs.filterHit, subs.filterEmpty].map((s) => s.id).sort();
    const matched = await eventually(async () => {
      const rows = await deliveries(pool, 'event_id = $1', [event.id]);
      return rows.length >= expected.length ? rows : undefined;
    });
    // Give a wrongly matched subscription the chance to show up before comparing.
    await receiver.waitFor(expected.length, { where: withId(event.id), what: 'a POST per matched subscription' });
    expect(matched.map((r) => r.subscription_id).sort()).to.deep.equal(expected);
    expect((await deliveries(pool, 'event_id = $1', [event.id])).length).to.equal(expected.length);
  });

  it('does not create a second delivery when the same event arrives twice (NATS redelivery)', async () => {
    await subscribe();
    const event = envelope('workorder.created', { work_order_id: 'x' });
    await publishEvents(js, [event]);
    await publishEvents(js, [event], () => `${event.id}-again`); // a second copy past the stream's dedup
    await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'success'])).length === 1);
    // The one consumer hands events over in stream order: once a later event has been delivered,
    // the copy has been taken in (a second row would have been inserted no later than the later one's).
    const later = envelope('workorder.created', { work_order_id: 'y' });
    await publishEvents(js, [later]);
    await receiver.waitFor(1, { where: withId(later.id), what: 'the later event delivered' });
    expect(await deliveries(pool, 'event_id = $1', [event.id])).to.have.length(1);
    expect(receiver.countById.get(event.id)).to.equal(1);
  });

  it('retries a 503 and then succeeds', async () => {
    await subscribe();
    receiver.respond = (_req, nth) => (nth === 1 ? { status: 503, body: 'busy' } : { status: 200 });
    const event = envelope('deployment.applied');
    await publishEvents(js, [event]);
    const failed = await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'failed']))[0], {
      what: 'the failed attempt',
    });
    expect(failed.last_error).to.equal('HTTP 503 Service Unavailable: busy');
    const ok = await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'success']))[0], {
      what: 'the retry',
    });
    expect(ok.attempts).to.equal(2);
    expect(receiver.countById.get(event.id)).to.equal(2);
  });

  it('gives up at once on a 404 (dead after one attempt) and audits webhook.delivery_failed', async () => {
    const sub = await subscribe({ maxRetries: 5 });
    receiver.respond = () => ({ status: 404, body: 'no such hook' });
    const event = envelope('agent.registered');
    await publishEvents(js, [event]);
    const dead = await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'dead']))[0], {
      what: 'dead',
    });
    expect(dead.attempts).to.equal(1);
    expect(dead.last_error).to.equal('HTTP 404 Not Found: no such hook');
    const jsm = await jetstreamManager(nc);
    const msg = await eventually(() =>
      jsm.streams.getMessage('BROKKR_AUDIT', { last_by_subj: SUBJECTS.audit('webhook.delivery_failed') }).catch(() => null),
    );
    expect(msg.json()).to.include({
      action: 'webhook.delivery_failed',
      actor_type: 'system',
      resource_type: 'webhook_subscription',
      resource_id: sub.id,
    });
  });

  it('treats max_retries as the total number of attempts', async () => {
    await subscribe({ maxRetries: 1 });
    receiver.respond = () => ({ status: 500 });
    const event = envelope('agent.registered');
    await publishEvents(js, [event]);
    const dead = await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'dead']))[0]);
    expect(dead.attempts).to.equal(1);
  });

  it('times out a receiver that never answers', async () => {
    await subscribe({ timeoutSeconds: 1, maxRetries: 1 });
    receiver.respond = () => ({ status: 200, hang: true });
    const event = envelope('stack.created');
    await publishEvents(js, [event]);
    const dead = await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'dead']))[0], {
      what: 'the timeout',
    });
    expect(dead.last_error).to.equal('Request failed: timed out');
    expect(receiver.countById.get(event.id)).to.equal(1);
  });

  it('honours Retry-After (next_retry_at is not sooner than the receiver asked)', async () => {
    await subscribe();
    receiver.respond = () => ({ status: 429, headers: { 'retry-after': '120' } });
    const event = envelope('stack.created');
    await publishEvents(js, [event]);
    const failed = await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'failed']))[0]);
    const sentAt = receiver.requests.find((r) => r.webhookId === event.id)!.receivedAt;
    expect(failed.next_retry_at!.getTime()).to.be.at.least(sentAt + 120_000 - 1000);
    expect(failed.next_retry_at!.getTime() - failed.last_attempt_at!.getTime()).to.be.at.least(120_000);
  });

  it('leaves rows with target_labels to agents', async () => {
    await subscribe({ targetLabels: ['env=prod'], eventTypes: ['stack.created'] });
    const event = envelope('stack.created');
    await publishEvents(js, [event]);
    const [row] = await eventually(async () => {
      const rows = await deliveries(pool, 'event_id = $1', [event.id]);
      return rows.length === 1 ? rows : undefined;
    });
    expect(row!.target_labels).to.deep.equal(['env=prod']);
    await claimPassSinceNow();
    expect((await deliveries(pool, 'event_id = $1', [event.id]))[0]!.status).to.equal('pending');
    expect(receiver.countById.has(event.id)).to.equal(false);
  });

  it('pauses the pending deliveries of a disabled subscription and resumes them when it is enabled again', async () => {
    const sub = await subscribe({ eventTypes: ['stack.created'] });
    receiver.respond = () => ({ status: 503 });
    const event = envelope('stack.created');
    await publishEvents(js, [event]);
    await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'failed'])).length === 1);
    await pool.query('UPDATE webhook_subscriptions SET enabled = false WHERE id = $1', [sub.id]);
    receiver.respond = () => ({ status: 200 });
    await pool.query(`UPDATE webhook_deliveries SET next_retry_at = now() WHERE event_id = $1`, [event.id]);
    await claimPassSinceNow();
    expect(receiver.countById.get(event.id)).to.equal(1);
    expect((await deliveries(pool, 'event_id = $1', [event.id]))[0]!.status).to.equal('failed');
    await pool.query('UPDATE webhook_subscriptions SET enabled = true WHERE id = $1', [sub.id]);
    await eventually(async () => (await deliveries(pool, 'event_id = $1 AND status = $2', [event.id, 'success'])).length === 1);
  });
});
