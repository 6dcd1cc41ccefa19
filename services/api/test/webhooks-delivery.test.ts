import { createHmac, timingSafeEqual } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { expect } from 'chai';
import {
  eventually,
  freePort,
  spawnService,
  startWebhookReceiver,
  useTestInfra,
  type ReceivedRequest,
  type Reply,
  type RunningService,
  type WebhookReceiver,
} from '@brokkr/testkit';
import { adminGeneratorId, ApiClient, auditMessages, createStack, insertAgentRow, startTestApi, type TestApi } from './support/index.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** What the receiver answers unless a test says otherwise. */
const OK: Reply = { status: 200, body: 'ok' };

/** Standard Webhooks verification written from the spec (independent of @brokkr/crypto). */
function verifies(secret: string, hit: ReceivedRequest): boolean {
  const id = String(hit.headers['webhook-id']);
  const ts = String(hit.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${ts}.${hit.body}`)
    .digest();
  return String(hit.headers['webhook-signature'])
    .split(' ')
    .some((sig) => {
      const [version, value] = sig.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

describe('api webhook deliveries, test sends, agent-delivered webhooks and the dispatcher end to end', function () {
  this.timeout(90_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let receiver: WebhookReceiver;

  before(async () => {
    api = await startTestApi(infra, {
      env: { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX, BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    receiver = await startWebhookReceiver(() => OK);
  });
  after(async () => {
    await receiver?.close();
    await api?.stop();
  });
  afterEach(() => {
    receiver.respond = () => OK;
  });

  async function subscribe(extra: Record<string, unknown> = {}) {
    const res = await api.admin.post('/webhooks', {
      name: 'r',
      url: receiver.url,
      event_types: ['stack.created'],
      auth_header: 'Bearer t',
      ...extra,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; signing_secret: string };
  }

  describe('POST /webhooks/{id}/test', () => {
    it('sends the test payload with the delivery headers and reports success', async () => {
      const sub = await subscribe();
      const res = await api.admin.post(`/webhooks/${sub.id}/test`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, status_code: 200, message: 'Test delivery successful' });
      const hit = receiver.requests.at(-1)!;
      const body = JSON.parse(hit.body);
      expect(body.event_type).to.equal('webhook.test');
      expect(body.data).to.deep.equal({ message: 'This is a test webhook delivery from Brokkr', subscription_id: sub.id });
      expect(hit.headers['webhook-id']).to.equal(body.id);
      expect(hit.headers.authorization).to.equal('Bearer t');
      expect(hit.headers['content-type']).to.equal('application/json');
      expect(verifies(sub.signing_secret, hit)).to.equal(true);
      expect(
        (await api.sql.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1', [sub.id])).rows[0].n,
      ).to.equal(0);
    });

    it('reports a non-2xx answer as 400 webhook_test_failed with the status and a short excerpt of the body', async () => {
      const sub = await subscribe();
      receiver.respond = () => ({ status: 500, body: 'x'.repeat(600) });
      const res = await api.admin.post(`/webhooks/${sub.id}/test`);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('webhook_test_failed');
      expect(res.body.details.status_code).to.equal(500);
      expect(res.body.details.body).to.equal('x'.repeat(256));
    });

    it('strips control characters and addresses from the body excerpt', async () => {
      const sub = await subscribe();
      receiver.respond = () => ({ status: 502, body: 'upstream\u0000 10.9.8.7:5432 refused\r\n\u202Egnp.exe' });
      const res = await api.admin.post(`/webhooks/${sub.id}/test`);
      expect(res.status).to.equal(400);
      expect(res.body.details).to.deep.equal({ status_code: 502, body: 'upstream  <endpoint> refused gnp.exe' });
    });

    it('refuses loopback targets unless private networks are allowed (SSRF guard)', async () => {
      const guarded = await api.spawnReplica({ BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
      const sub = await subscribe();
      const before = receiver.requests.length;
      expect((await api.admin.post(`/webhooks/${sub.id}/test`)).status).to.equal(200); // the first replica allows it
      const client = new ApiClient(guarded.url, api.adminPak);
      const localhost = await api.admin.post('/webhooks', {
        name: 'l',
        url: `http://localhost:${new URL(receiver.url).port}/x`,
        event_types: ['*'],
      });
      for (const id of [sub.id, localhost.body.id]) {
        const refused = await client.post(`/webhooks/${id}/test`);
        expect(refused.status).to.equal(400);
        expect(refused.body.code).to.equal('webhook_test_failed');
        expect(refused.body.details).to.equal(undefined);
      }
      expect(receiver.requests.length).to.equal(before + 1);
      expect((await api.admin.post('/webhooks/00000000-0000-4000-8000-000000000000/test')).body.code).to.equal('webhook_not_found');
    });

    it("refuses the host's own interface addresses: the hub's api port is not reachable through a test send", async () => {
      const guarded = await api.spawnReplica({ BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
      const client = new ApiClient(guarded.url, api.adminPak);
      // The probe's case: the machine's interface sat in a range the guard used to allow.
      const own = Object.values(networkInterfaces())
        .flatMap((e) => e ?? [])
        .filter((e) => !e.internal && e.family === 'IPv4')
        .map((e) => e.address);
      for (const address of [...own, '127.0.0.1']) {
        const created = await client.post('/webhooks', {
          name: 'self',
          url: `http://${address}:${guarded.port}/api/v1/webhooks`,
          event_types: ['*'],
        });
        expect(created.status, created.text).to.equal(201);
        const refused = await client.post(`/webhooks/${created.body.id}/test`);
        expect(refused.status, address).to.equal(400);
        expect(refused.body.code).to.equal('webhook_test_failed');
        expect(refused.body.details).to.equal(undefined);
        expect(refused.body.message).to.not.include(address);
        expect(refused.body.message).to.match(/private or reserved address/);
      }
    });
  });

  describe('delivery listings and redelivery', () => {
    let sub: { id: string };
    const ids: Record<string, string> = {};

    before(async () => {
      sub = await subscribe();
      for (const status of ['dead', 'success', 'pending', 'failed']) {
        const { rows } = await api.sql.query(
          `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, status, attempts, created_at)
           VALUES ($1, 'stack.created', gen_random_uuid(), '{"id":"x"}', $2, 3, now() - make_interval(secs => $3)) RETURNING id`,
          [sub.id, status, Object.keys(ids).length],
        );
        ids[status] = rows[0].id;
      }
    });

    it("lists a subscription's deliveries newest first, with status, limit and offset", async () => {
      const all = await api.admin.get(`/webhooks/${sub.id}/deliveries`);
      expect(all.status).to.equal(200);
      expect(all.body.map((d: { id: string }) => d.id)).to.deep.equal([ids.dead, ids.success, ids.pending, ids.failed]);
      expect(Object.keys(all.body[0]).sort()).to.deep.equal([
        'acquired_by',
        'acquired_until',
        'attempts',
        'completed_at',
        'created_at',
        'event_id',
        'event_type',
        'id',
        'last_attempt_at',
        'last_error',
        'next_retry_at',
        'payload',
        'status',
        'subscription_id',
        'target_labels',
      ]);
      expect(all.body[0].payload).to.equal('{"id":"x"}');
      const dead = await api.admin.get(`/webhooks/${sub.id}/deliveries`, { query: { status: 'dead' } });
      expect(dead.body.map((d: { id: string }) => d.id)).to.deep.equal([ids.dead]);
      const page = await api.admin.get(`/webhooks/${sub.id}/deliveries`, { query: { limit: 1, offset: 1 } });
      expect(page.body.map((d: { id: string }) => d.id)).to.deep.equal([ids.success]);
      expect((await api.admin.get(`/webhooks/${sub.id}/deliveries`, { query: { limit: -1 } })).status).to.equal(400);
      expect((await api.admin.get('/webhooks/00000000-0000-4000-8000-000000000000/deliveries')).body.code).to.equal('webhook_not_found');
    });

    it('lists deliveries across subscriptions by status and subscription', async () => {
      const res = await api.admin.get('/webhook-deliveries', { query: { status: 'dead', subscription_id: sub.id } });
      expect(res.status).to.equal(200);
      expect(res.body.map((d: { id: string }) => d.id)).to.deep.equal([ids.dead]);
      expect((await api.admin.get('/webhook-deliveries', { query: { status: 'bogus' } })).body.code).to.equal('invalid_query');
      expect((await api.admin.get('/webhook-deliveries', { query: { limit: 0 } })).status).to.equal(400);
    });

    it('redelivers dead and successful deliveries (fresh budget), refuses unfinished ones (409)', async () => {
      for (const status of ['dead', 'success']) {
        const res = await api.admin.post(`/webhook-deliveries/${ids[status]}/redeliver`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ status: 'pending', attempts: 0, completed_at: null });
      }
      const busy = await api.admin.post(`/webhook-deliveries/${ids.pending}/redeliver`);
      expect([busy.status, busy.body.code]).to.deep.equal([409, 'delivery_not_finished']);
      expect((await api.admin.post('/webhook-deliveries/00000000-0000-4000-8000-000000000000/redeliver')).body.code).to.equal(
        'delivery_not_found',
      );
      expect((await auditMessages(api.natsUrl, 'webhook.redelivered')).length).to.be.at.least(2);
    });
  });

  describe('agent-delivered webhooks', () => {
    let sub: { id: string };
    let a: { id: string; client: ApiClient };
    let b: { id: string; client: ApiClient };
    let other: { id: string; client: ApiClient };

    async function agentWith(labels: string[], status = 'ACTIVE') {
      const row = await insertAgentRow(api.sql, { status });
      for (const label of labels) await api.sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [row.id, label]);
      return { id: row.id, client: api.admin.as(row.pak) };
    }
    async function insertDeliveries(n: number, labels: string[]): Promise<string[]> {
      const { rows } = await api.sql.query(
        `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, target_labels)
         SELECT $1, 'stack.created', gen_random_uuid(), '{"n":' || g || '}', $3 FROM generate_series(1, $2) g RETURNING id`,
        [sub.id, n, labels],
      );
      return rows.map((r: { id: string }) => r.id);
    }

    before(async () => {
      sub = await subscribe({ target_labels: ['env=prod', 'region=eu'] });
      a = await agentWith(['env=prod', 'region=eu']);
      b = await agentWith(['env=prod', 'region=eu', 'gpu']);
      other = await agentWith(['env=prod']);
    });

    it('hands each delivery to exactly one of two matching agents (AND of target_labels)', async () => {
      const created = await insertDeliveries(40, ['env=prod', 'region=eu']);
      const claimed: Record<string, string[]> = { a: [], b: [] };
      const poll = async (name: 'a' | 'b', agent: typeof a) => {
        for (;;) {
          const res = await agent.client.get(`/agents/${agent.id}/webhooks/pending`);
          expect(res.status, res.text).to.equal(200);
          expect(res.body.length).to.be.at.most(10);
          if (res.body.length === 0) return;
          for (const d of res.body) claimed[name]!.push(d.id);
        }
      };
      expect((await other.client.get(`/agents/${other.id}/webhooks/pending`)).body).to.deep.equal([]);
      await Promise.all([poll('a', a), poll('b', b)]);
      const all = [...claimed.a!, ...claimed.b!];
      expect(new Set(all).size).to.equal(all.length, 'a delivery was handed out twice');
      expect(all.sort()).to.deep.equal([...created].sort());
      const { rows } = await api.sql.query(
        `SELECT acquired_by, count(*)::int AS n FROM webhook_deliveries WHERE id = ANY($1) GROUP BY acquired_by`,
        [created],
      );
      expect(rows.reduce((s: number, r: { n: number }) => s + r.n, 0)).to.equal(40);
    });

    it('returns the decrypted URL and auth header; inactive agents get nothing; 403/404 codes', async () => {
      const [id] = await insertDeliveries(1, ['env=prod']);
      const sleeper = await agentWith(['env=prod'], 'INACTIVE');
      expect((await sleeper.client.get(`/agents/${sleeper.id}/webhooks/pending`)).body).to.deep.equal([]);
      const res = await other.client.get(`/agents/${other.id}/webhooks/pending`);
      expect(res.body).to.have.length(1);
      expect(res.body[0]).to.deep.include({
        id,
        subscription_id: sub.id,
        event_type: 'stack.created',
        payload: '{"n":1}',
        url: receiver.url,
        auth_header: 'Bearer t',
        attempts: 0,
        max_retries: 5,
        timeout_seconds: 30,
      });
      const mismatch = await other.client.get(`/agents/${a.id}/webhooks/pending`);
      expect([mismatch.status, mismatch.body.code]).to.deep.equal([403, 'agent_pak_mismatch']);
      const missing = await api.admin.get('/agents/00000000-0000-4000-8000-000000000000/webhooks/pending');
      expect([missing.status, missing.body.code]).to.deep.equal([404, 'agent_not_found']);
    });

    it('records agent results with Brokkr codes: success, retryable failure, terminal failure', async () => {
      const [ok, retry, terminal] = await insertDeliveries(3, ['gpu']);
      const res = await b.client.get(`/agents/${b.id}/webhooks/pending`);
      expect(res.body.map((d: { id: string }) => d.id).sort()).to.deep.equal([ok, retry, terminal].sort());

      expect((await api.admin.post(`/webhook-deliveries/${ok}/result`, { success: true })).body.code).to.equal('agent_pak_required');
      expect((await a.client.post(`/webhook-deliveries/${ok}/result`, { success: true })).body.code).to.equal(
        'delivery_not_acquired_by_agent',
      );
      expect(
        (await b.client.post('/webhook-deliveries/00000000-0000-4000-8000-000000000000/result', { success: true })).body.code,
      ).to.equal('delivery_not_found');
      expect((await b.client.post(`/webhook-deliveries/${ok}/result`, { success: 'yes' })).status).to.equal(422);

      const success = await b.client.post(`/webhook-deliveries/${ok}/result`, { success: true, status_code: 200, duration_ms: 12 });
      expect(success.body).to.deep.equal({ status: 'success', delivery_id: ok });
      const again = await b.client.post(`/webhook-deliveries/${ok}/result`, { success: true });
      expect(again.body).to.include({ status: 'success', delivery_id: ok, attempts: 1 });

      const failed = await b.client.post(`/webhook-deliveries/${retry}/result`, { success: false, status_code: 503, error: 'busy' });
      expect(failed.body).to.include({ status: 'failed', delivery_id: retry, attempts: 1 });
      expect(new Date(failed.body.next_retry_at).getTime()).to.be.greaterThan(Date.now());
      const row = (await api.sql.query('SELECT last_error, acquired_by FROM webhook_deliveries WHERE id = $1', [retry])).rows[0];
      expect(row).to.deep.equal({ last_error: 'HTTP 503: busy', acquired_by: null });

      const dead = await b.client.post(`/webhook-deliveries/${terminal}/result`, {
        success: false,
        status_code: 404,
        error: 'HTTP 404 gone',
      });
      expect(dead.body).to.include({ status: 'dead', delivery_id: terminal, attempts: 1, next_retry_at: null });
      const audits = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'webhook.delivery_failed')).filter((m) => m.details?.delivery_id === terminal),
      );
      expect(audits[0]).to.include({ actor_type: 'system', resource_type: 'webhook_subscription', resource_id: sub.id });
      expect(audits[0]!.details).to.include({ error: 'HTTP 404 gone', status_code: 404, retryable: false, delivered_by_agent: b.id });
    });
  });

  describe('start-up key check', () => {
    it('refuses to start without a key while subscriptions exist (api and dispatcher)', async () => {
      await subscribe();
      const err = await api.spawnReplica({ BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: '' }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).to.include('BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY');
      const port = await freePort();
      const dispatcher = await spawnService({
        service: 'webhook-dispatcher',
        env: {
          BROKKR__DATABASE__URL: api.database.url,
          BROKKR__NATS__URL: api.natsUrl,
          BROKKR__HEALTH__PORT: String(port),
          BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: '',
        },
      });
      expect(await dispatcher.exited).to.equal(1);
      expect(dispatcher.output()).to.include('BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY');
    });
  });

  describe('end to end: api commit → outbox → JetStream → dispatcher → receiver', () => {
    let dispatcher: RunningService;

    before(async () => {
      const port = await freePort();
      dispatcher = await spawnService({
        service: 'webhook-dispatcher',
        env: {
          BROKKR__DATABASE__URL: api.database.url,
          BROKKR__NATS__URL: api.natsUrl,
          BROKKR__HEALTH__PORT: String(port),
          BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
          BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
      });
    });
    after(async () => {
      expect(await dispatcher?.stop()).to.equal(0);
    });

    it('delivers stack.created, signed with the subscription secret (and both secrets after a rotation)', async () => {
      await api.sql.query('UPDATE webhook_subscriptions SET enabled = false');
      const sub = await subscribe();
      const generatorId = await adminGeneratorId(api.admin);
      const stack = await createStack(api.admin, { generator_id: generatorId });
      const hit = (
        await receiver.waitFor(1, {
          where: (h) => h.body.includes(stack.id) && h.body.includes('stack.created'),
          timeoutMs: 30_000,
          what: 'the webhook',
        })
      )[0]!;
      const event = JSON.parse(hit.body);
      expect(event).to.include({ event_type: 'stack.created' });
      expect(event.data).to.include({ stack_id: stack.id, name: stack.name });
      expect(hit.headers['webhook-id']).to.equal(event.id);
      expect(hit.headers.authorization).to.equal('Bearer t');
      expect(verifies(sub.signing_secret, hit)).to.equal(true);
      await eventually(async () => {
        const res = await api.admin.get(`/webhooks/${sub.id}/deliveries`, { query: { status: 'success' } });
        return res.body.length === 1 && res.body[0].event_id === event.id;
      });

      const rotated = (await api.admin.post(`/webhooks/${sub.id}/rotate-secret`)).body;
      const second = await createStack(api.admin, { generator_id: generatorId });
      const hit2 = (
        await receiver.waitFor(1, { where: (h) => h.body.includes(second.id), timeoutMs: 30_000, what: 'the second webhook' })
      )[0]!;
      expect(String(hit2.headers['webhook-signature']).split(' ')).to.have.length(2);
      expect(verifies(rotated.signing_secret, hit2)).to.equal(true);
      expect(verifies(sub.signing_secret, hit2)).to.equal(true);
    });
  });
});
