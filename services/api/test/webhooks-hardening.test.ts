import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { encrypt, loadWebhookKey } from '@brokkr/crypto';
import { eventually } from '@brokkr/testkit';
import { auditMessages, insertAgentRow, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const key = loadWebhookKey(KEY_HEX);

/** Issue 11: input that reached the database before it was validated, and what agents report. */
describe('api webhook hardening: stored auth headers no client can send', function () {
  this.timeout(60_000);
  let api: TestApi;
  let server: Server;
  let hits = 0;
  let url: string;

  before(async () => {
    api = await startTestApi({ env: { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX, BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await new Promise<void>((r) => server?.close(() => r()));
    await api?.stop();
  });

  /** A subscription whose auth header was stored before create/update validated it. */
  async function subscriptionWithStoredHeader(authHeader: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await api.admin.post('/webhooks', { name: 'legacy', url, event_types: ['stack.created'], auth_header: 'Bearer fine', ...extra });
    expect(res.status, res.text).to.equal(201);
    await api.sql.query('UPDATE webhook_subscriptions SET auth_header_encrypted = $2 WHERE id = $1', [res.body.id, encrypt(key, authHeader)]);
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
    expect(hits).to.equal(0);
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
    const audits = await eventually(async () => (await auditMessages(api.natsUrl, 'webhook.delivery_failed')).filter((m) => m.details?.delivery_id === deliveryId));
    expect(audits[0]).to.include({ actor_type: 'system', resource_id: id });
  });
});
