import { expect } from 'chai';
import { encrypt, loadWebhookKey } from '@brokkr/crypto';
import { eventually, startWebhookReceiver, useTestInfra, type WebhookReceiver } from '@brokkr/testkit';
import { auditMessages, insertAgentRow, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const key = loadWebhookKey(KEY_HEX);

/** Input that reached the database before it was validated, and what agents report. */
describe('api webhook hardening: stored auth headers, interrupted agent attempts, agent error texts', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let receiver: WebhookReceiver;
  let url: string;

  before(async () => {
    api = await startTestApi(infra, {
      env: { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX, BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    receiver = await startWebhookReceiver(() => ({ status: 200, body: 'ok' }));
    url = receiver.url;
  });
  after(async () => {
    await receiver?.close();
    await api?.stop();
  });

  /** A subscription whose auth header was stored before create/update validated it. */
  async function subscriptionWithStoredHeader(authHeader: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await api.admin.post('/webhooks', {
      name: 'legacy',
      url,
      event_types: ['stack.created'],
      auth_header: 'Bearer fine',
      ...extra,
    });
    expect(res.status, res.text).to.equal(201);
    await api.sql.query('UPDATE webhook_subscriptions SET auth_header_encrypted = $2 WHERE id = $1', [
      res.body.id,
      encrypt(key, authHeader),
    ]);
    return res.body.id as string;
  }

  const BAD_HEADERS = ['Bearer a\nX-Injected: 1', 'Bearer \u0000', 'Bearer \u202Eabc', 'Bearer 😀'];

  it('POST /webhooks/{id}/test answers 400 webhook_test_failed (not 500) and sends nothing', async () => {
    for (const header of BAD_HEADERS) {
      const id = await subscriptionWithStoredHeader(header);
      const res = await api.admin.post(`/webhooks/${id}/test`);
      expect(res.status, JSON.stringify(header)).to.equal(400);
      expect(res.body.code).to.equal('webhook_test_failed');
      expect(res.body.message).to.match(/stored auth_header cannot be sent/);
    }
    expect(receiver.requests).to.have.length(0);
  });

  it('an agent is never handed such a delivery: it goes dead at claim time and is audited', async () => {
    const id = await subscriptionWithStoredHeader('Bearer a\r\nb', { target_labels: ['edge'] });
    const agent = await insertAgentRow(api.sql, { labels: ['edge'], status: 'ACTIVE' });
    const client: ApiClient = api.admin.as(agent.pak);
    const { rows } = await api.sql.query(
      `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, target_labels)
       VALUES ($1, 'stack.created', gen_random_uuid(), '{}', ARRAY['edge']) RETURNING id`,
      [id],
    );
    const deliveryId = rows[0].id as string;
    const pending = await client.get(`/agents/${agent.id}/webhooks/pending`);
    expect(pending.status, pending.text).to.equal(200);
    expect(pending.body).to.deep.equal([]);
    const row = (await api.sql.query('SELECT status, attempts, last_error FROM webhook_deliveries WHERE id = $1', [deliveryId])).rows[0];
    expect(row.status).to.equal('dead');
    expect(row.last_error).to.match(/auth header cannot be sent/);
    const audits = await eventually(async () =>
      (await auditMessages(api.natsUrl, 'webhook.delivery_failed')).filter((m) => m.details?.delivery_id === deliveryId),
    );
    expect(audits[0]).to.include({ actor_type: 'system', resource_id: id });
  });

  describe('agent-delivered webhooks', () => {
    let agentA: { id: string; client: ApiClient };
    let agentB: { id: string; client: ApiClient };

    before(async () => {
      for (const name of ['a', 'b']) {
        const row = await insertAgentRow(api.sql, { labels: ['lease-test'], status: 'ACTIVE' });
        const agent = { id: row.id, client: api.admin.as(row.pak) };
        if (name === 'a') agentA = agent;
        else agentB = agent;
      }
    });

    async function agentDelivery(maxRetries: number): Promise<{ subscriptionId: string; deliveryId: string }> {
      const sub = await api.admin.post('/webhooks', {
        name: 'edge',
        url,
        event_types: ['stack.created'],
        target_labels: ['lease-test'],
        max_retries: maxRetries,
      });
      expect(sub.status, sub.text).to.equal(201);
      const { rows } = await api.sql.query(
        `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, target_labels)
         VALUES ($1, 'stack.created', gen_random_uuid(), '{}', ARRAY['lease-test']) RETURNING id`,
        [sub.body.id],
      );
      return { subscriptionId: sub.body.id, deliveryId: rows[0].id };
    }

    /** As if agent A died holding the delivery: its lease runs out with no report. */
    async function expireLease(deliveryId: string): Promise<void> {
      await api.sql.query(`UPDATE webhook_deliveries SET acquired_until = now() - interval '1 second' WHERE id = $1`, [deliveryId]);
    }

    const row = async (id: string) =>
      (await api.sql.query('SELECT status, attempts, last_error, acquired_by FROM webhook_deliveries WHERE id = $1', [id])).rows[0];

    it('counts the attempt of an agent whose lease expired when another agent takes the delivery over', async () => {
      const { deliveryId } = await agentDelivery(3);
      const first = await agentA.client.get(`/agents/${agentA.id}/webhooks/pending`);
      expect(first.body.find((d: { id: string }) => d.id === deliveryId)).to.include({ attempts: 0 });
      await expireLease(deliveryId);
      const second = await agentB.client.get(`/agents/${agentB.id}/webhooks/pending`);
      expect(second.body.find((d: { id: string }) => d.id === deliveryId)).to.include({ attempts: 1 });
      expect((await row(deliveryId)).last_error).to.match(/^Request interrupted: the lease expired before the agent reported/);
      const late = await agentA.client.post(`/webhook-deliveries/${deliveryId}/result`, { success: true });
      expect([late.status, late.body.code]).to.deep.equal([403, 'delivery_not_acquired_by_agent']);
      const done = await agentB.client.post(`/webhook-deliveries/${deliveryId}/result`, { success: true, status_code: 200 });
      expect(done.status, done.text).to.equal(200);
      expect(await row(deliveryId)).to.include({ status: 'success', attempts: 2, last_error: null });
    });

    it('settles it dead instead of handing it out again when the interrupted attempt was the last allowed one', async () => {
      const { subscriptionId, deliveryId } = await agentDelivery(1);
      expect((await agentA.client.get(`/agents/${agentA.id}/webhooks/pending`)).body.map((d: { id: string }) => d.id)).to.include(
        deliveryId,
      );
      await expireLease(deliveryId);
      expect((await agentB.client.get(`/agents/${agentB.id}/webhooks/pending`)).body.map((d: { id: string }) => d.id)).to.not.include(
        deliveryId,
      );
      const dead = await row(deliveryId);
      expect(dead).to.include({ status: 'dead', attempts: 1, acquired_by: agentA.id });
      expect(dead.last_error).to.match(/^Request interrupted/);
      const audits = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'webhook.delivery_failed')).filter((m) => m.details?.delivery_id === deliveryId),
      );
      expect(audits[0]).to.include({ resource_id: subscriptionId });
      // Agent A's late report finds the outcome already recorded.
      const late = await agentA.client.post(`/webhook-deliveries/${deliveryId}/result`, { success: true });
      expect(late.body).to.include({ status: 'dead', attempts: 1 });
    });

    it('stores and audits an agent-reported error without the endpoint or control characters', async () => {
      const { deliveryId } = await agentDelivery(1);
      await agentA.client.get(`/agents/${agentA.id}/webhooks/pending`);
      const { host, hostname, port } = new URL(url);
      const reported = `error sending request for url (${url}): client error (Connect): tcp connect error: Connection refused to ${host} [${hostname}]:${port}\u0000\u202E`;
      const res = await agentA.client.post(`/webhook-deliveries/${deliveryId}/result`, { success: false, error: reported });
      expect(res.body).to.include({ status: 'dead' });
      const stored = (await row(deliveryId)).last_error as string;
      expect(stored).to.equal(
        'error sending request for url (<endpoint>): client error (Connect): tcp connect error: Connection refused to <endpoint> <endpoint>',
      );
      expect(stored).to.not.include(hostname).and.not.include(port);
      const audits = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'webhook.delivery_failed')).filter((m) => m.details?.delivery_id === deliveryId),
      );
      expect(audits[0]!.details).to.include({ error: stored });
    });
  });
});
