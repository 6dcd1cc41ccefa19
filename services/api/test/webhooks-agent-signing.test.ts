import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { encrypt, loadWebhookKey } from '@brokkr/crypto';
import { useTestInfra } from '@brokkr/testkit';
import { insertAgentRow, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

interface Claimed {
  id: string;
  payload: string;
  webhook_headers: Record<string, string>;
}

/** Agent-delivered webhooks are signed by the api at claim time: the agent never holds the secret. */
describe('api agent-delivered webhooks: Standard Webhooks headers in the pending response', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let agent: { id: string; client: ApiClient };

  before(async () => {
    api = await startTestApi(infra, {
      env: { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX, BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    const row = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    agent = { id: row.id, client: api.admin.as(row.pak) };
  });
  after(async () => {
    await api?.stop();
  });

  /** A subscription only this test's agent matches (a fresh label each time), and one delivery of it. */
  async function subscriptionWithDelivery(payload = '{"id":"e","n":1}') {
    const label = `signing-${Math.random().toString(36).slice(2, 8)}`;
    await api.sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [agent.id, label]);
    const res = await api.admin.post('/webhooks', {
      name: 's',
      url: 'http://127.0.0.1:9/hook',
      event_types: ['stack.created'],
      target_labels: [label],
    });
    expect(res.status, res.text).to.equal(201);
    const sub = res.body as { id: string; signing_secret: string };
    const { rows } = await api.sql.query(
      `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, target_labels)
       VALUES ($1, 'stack.created', gen_random_uuid(), $2, $3) RETURNING id, event_id`,
      [sub.id, payload, [label]],
    );
    return { sub, delivery: rows[0] as { id: string; event_id: string } };
  }

  async function claim(): Promise<Claimed[]> {
    const res = await agent.client.get(`/agents/${agent.id}/webhooks/pending`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  it('carries webhook-id (the event id), webhook-timestamp (now) and a signature that verifies with the subscription secret', async () => {
    const { sub, delivery } = await subscriptionWithDelivery('{"id":"e","data":{"name":"ü"}}');
    const [pending] = await claim();
    expect(pending!.id).to.equal(delivery.id);
    const headers = pending!.webhook_headers;
    expect(Object.keys(headers).sort()).to.deep.equal(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-id']).to.equal(delivery.event_id);
    expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).to.be.below(30);
    // The independent Standard Webhooks library (it also checks the timestamp's freshness).
    expect(() => new Webhook(sub.signing_secret).verify(pending!.payload, headers)).to.not.throw();
    expect(() => new Webhook(sub.signing_secret).verify(`${pending!.payload} `, headers)).to.throw();
  });

  it('signs with both secrets during a rotation grace period', async () => {
    const { sub } = await subscriptionWithDelivery();
    const rotated = await api.admin.post(`/webhooks/${sub.id}/rotate-secret`);
    expect(rotated.status, rotated.text).to.equal(200);
    const [pending] = await claim();
    expect(pending!.webhook_headers['webhook-signature']!.split(' ')).to.have.length(2);
    for (const secret of [sub.signing_secret, rotated.body.signing_secret as string]) {
      expect(() => new Webhook(secret).verify(pending!.payload, pending!.webhook_headers)).to.not.throw();
    }
  });

  it('a subscription without a secret (migrated from Brokkr) gets id and timestamp but no signature', async () => {
    const { sub } = await subscriptionWithDelivery();
    await api.sql.query('UPDATE webhook_subscriptions SET signing_secret_encrypted = NULL WHERE id = $1', [sub.id]);
    const [pending] = await claim();
    expect(Object.keys(pending!.webhook_headers).sort()).to.deep.equal(['webhook-id', 'webhook-timestamp']);
  });

  it('a signing secret that does not decrypt makes the delivery dead (never handed out unsigned)', async () => {
    const { sub, delivery } = await subscriptionWithDelivery();
    const otherKey = loadWebhookKey('ff'.repeat(32));
    await api.sql.query('UPDATE webhook_subscriptions SET signing_secret_encrypted = $2 WHERE id = $1', [
      sub.id,
      encrypt(otherKey, 'whsec_x'),
    ]);
    expect(await claim()).to.deep.equal([]);
    const row = (await api.sql.query('SELECT status, last_error FROM webhook_deliveries WHERE id = $1', [delivery.id])).rows[0];
    expect(row.status).to.equal('dead');
    expect(row.last_error).to.match(/^Failed to decrypt signing secret: /);
  });

  it('documents webhook_headers in the OpenAPI schema of the pending response', async () => {
    const doc = (
      await api.anonymous.get<{
        components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
      }>('//docs/openapi.json')
    ).body;
    const schema = doc.components.schemas.PendingWebhookDelivery!;
    expect(schema.properties).to.have.property('webhook_headers');
    expect(schema.properties).to.include.keys('url', 'auth_header', 'payload');
  });
});
