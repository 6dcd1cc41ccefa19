import { expect } from 'chai';
import { decryptString, loadWebhookKey } from '@brokkr/crypto';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  RFC3339_Z,
  auditMessages,
  collectCore,
  createGenerator,
  insertAgentRow,
  startTestApi,
  type ApiClient,
  type TestApi,
} from './support/index.ts';

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const WEBHOOK_FIELDS = [
  'created_at',
  'created_by',
  'enabled',
  'event_types',
  'filters',
  'has_auth_header',
  'has_url',
  'id',
  'max_retries',
  'name',
  'target_labels',
  'timeout_seconds',
  'updated_at',
];
const EVENT_TYPES = [
  'agent.registered',
  'agent.deregistered',
  'stack.created',
  'stack.deleted',
  'deployment.created',
  'deployment.applied',
  'deployment.failed',
  'deployment.deleted',
  'workorder.created',
  'workorder.claimed',
  'workorder.completed',
  'workorder.failed',
  'stack.expiring',
  'stack.expired',
  'rollout.started',
  'rollout.wave_started',
  'rollout.succeeded',
  'rollout.failed',
  'rollout.rolled_back',
  'rollout.paused',
  'rollout.resumed',
  'rollout.aborted',
  'rollout.promoted',
  'approval.requested',
  'preview.created',
  'preview.completed',
  'drift.detected',
  'drift.corrected',
  'drift.resolved',
  'deployment.render_failed',
  'deployment.window_blocked',
];

const valid = (extra: Record<string, unknown> = {}) => ({ name: 'hook', url: 'https://hooks.example.com/x', event_types: ['*'], ...extra });

describe('api webhook subscriptions', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let generator: ApiClient;
  let agent: ApiClient;

  before(async () => {
    api = await startTestApi(infra, { env: { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX } });
    generator = (await createGenerator(api.admin)).client;
    agent = api.admin.as((await insertAgentRow(api.sql)).pak);
  });
  after(async () => {
    await api?.stop();
  });

  it('is admin only: 403 admin_required for agents and generators on every subscription endpoint', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const calls: [string, string, unknown?][] = [
      ['GET', '/webhooks'],
      ['POST', '/webhooks', valid()],
      ['GET', '/webhooks/event-types'],
      ['GET', `/webhooks/${id}`],
      ['PUT', `/webhooks/${id}`, {}],
      ['DELETE', `/webhooks/${id}`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['POST', `/webhooks/${id}/test`],
      ['POST', `/webhooks/${id}/rotate-secret`],
      ['GET', '/webhook-deliveries'],
      ['POST', `/webhook-deliveries/${id}/redeliver`],
    ];
    for (const client of [generator, agent]) {
      for (const [method, path, json] of calls) {
        const res = await client.request(method, path, json === undefined ? {} : { json });
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body.code).to.equal('admin_required');
      }
    }
  });

  it('lists the 12 event types in order', async () => {
    const res = await api.admin.get('/webhooks/event-types');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal(EVENT_TYPES);
  });

  it('creates a subscription (201), returns the signing secret once and never the URL or auth header', async () => {
    const res = await api.admin.post(
      '/webhooks',
      valid({
        auth_header: 'Bearer s3cret',
        filters: { stack_id: '7B0C6F1E-8A53-4B5E-9A59-3C9C1A0B2D11' },
        target_labels: ['env=prod'],
        max_retries: 3,
        timeout_seconds: 10,
      }),
    );
    expect(res.status, res.text).to.equal(201);
    expect(Object.keys(res.body).sort()).to.deep.equal([...WEBHOOK_FIELDS, 'signing_secret'].sort());
    expect(res.body).to.include({
      name: 'hook',
      has_url: true,
      has_auth_header: true,
      enabled: true,
      max_retries: 3,
      timeout_seconds: 10,
      created_by: 'admin',
    });
    expect(res.body.filters).to.deep.equal({ stack_id: '7b0c6f1e-8a53-4b5e-9a59-3c9c1a0b2d11' });
    expect(res.body.target_labels).to.deep.equal(['env=prod']);
    expect(res.body.signing_secret).to.match(/^whsec_/);
    expect(res.body.created_at).to.match(RFC3339_Z);
    expect(res.text).to.not.include('hooks.example.com').and.not.include('s3cret');

    const got = await api.admin.get(`/webhooks/${res.body.id}`);
    expect(Object.keys(got.body).sort()).to.deep.equal(WEBHOOK_FIELDS);
    expect(got.text).to.not.include('hooks.example.com');

    // Encrypted at rest with Brokkr's envelope and the configured key.
    const { rows } = await api.sql.query(
      'SELECT url_encrypted, auth_header_encrypted, signing_secret_encrypted FROM webhook_subscriptions WHERE id = $1',
      [res.body.id],
    );
    const key = loadWebhookKey(KEY_HEX);
    expect(rows[0].url_encrypted[0]).to.equal(0x01);
    expect(rows[0].url_encrypted.toString('latin1')).to.not.include('hooks.example.com');
    expect(decryptString(key, rows[0].url_encrypted)).to.equal('https://hooks.example.com/x');
    expect(decryptString(key, rows[0].auth_header_encrypted)).to.equal('Bearer s3cret');
    expect(decryptString(key, rows[0].signing_secret_encrypted)).to.equal(res.body.signing_secret);
  });

  it('applies the defaults (max_retries 5, timeout 30) and accepts event types it does not know', async () => {
    const res = await api.admin.post('/webhooks', valid({ event_types: ['custom.thing', 'stack.*'] }));
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ max_retries: 5, timeout_seconds: 30, has_auth_header: false });
    expect(res.body.filters).to.equal(null);
    expect(res.body.target_labels).to.equal(null);
  });

  it('validates a create in Brokkr order', async () => {
    const cases: [unknown, number, string][] = [
      [{ ...valid(), validate: null, name: 42 }, 422, 'unsupported_field'],
      [{ ...valid(), filters: { labels: ['a'] }, url: '' }, 422, 'unsupported_field'],
      [{ ...valid(), name: 42, url: '' }, 422, 'invalid_request_body'],
      [{ url: 'https://x' }, 422, 'invalid_request_body'],
      [{ ...valid(), filters: { agent_id: 'not-a-uuid' } }, 422, 'invalid_request_body'],
      [{ ...valid(), max_retries: 1.5 }, 422, 'invalid_request_body'],
      [{ ...valid(), url: '  ', name: '' }, 400, 'url_required'],
      [{ ...valid(), url: 'ftp://x', name: '' }, 400, 'invalid_url_scheme'],
      [{ ...valid(), name: '   ', max_retries: 99 }, 400, 'invalid_webhook'],
      [{ ...valid(), name: 'x'.repeat(256) }, 400, 'invalid_webhook'],
      [{ ...valid(), event_types: [], timeout_seconds: 0 }, 400, 'invalid_webhook'],
      [{ ...valid(), max_retries: 11 }, 422, 'invalid_webhook'],
      [{ ...valid(), max_retries: -1 }, 422, 'invalid_webhook'],
      [{ ...valid(), timeout_seconds: 0 }, 422, 'invalid_webhook'],
      [{ ...valid(), timeout_seconds: 301 }, 422, 'invalid_webhook'],
      [[], 422, 'invalid_request_body'],
    ];
    for (const [body, status, code] of cases) {
      const res = await api.admin.post('/webhooks', body);
      expect(res.status, JSON.stringify(body)).to.equal(status);
      expect(res.body.code, JSON.stringify(body)).to.equal(code);
    }
    const removed = await api.admin.post('/webhooks', { ...valid(), validate: true });
    expect(removed.body.details).to.deep.equal({ field: 'validate', use_instead: 'POST /webhooks/{id}/test' });
    const labels = await api.admin.post('/webhooks', { ...valid(), filters: { labels: null } });
    expect(labels.body.details).to.deep.equal({ field: 'filters.labels', use_instead: 'target_labels' });
    // Edge ranges are fine.
    expect((await api.admin.post('/webhooks', valid({ max_retries: 0, timeout_seconds: 300 }))).status).to.equal(201);
  });

  it('answers JSON errors for a non-JSON content type and malformed JSON', async () => {
    const text = await api.admin.request('POST', '/webhooks', { raw: 'x', contentType: 'text/plain' });
    expect(text.status).to.equal(415);
    const bad = await api.admin.request('POST', '/webhooks', { raw: '{', contentType: 'application/json' });
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('invalid_json');
  });

  it('lists newest first, disabled ones included; 404 webhook_not_found and 400 for a bad id', async () => {
    const a = (await api.admin.post('/webhooks', valid({ name: 'a' }))).body;
    const b = (await api.admin.post('/webhooks', valid({ name: 'b' }))).body;
    await api.admin.put(`/webhooks/${a.id}`, { enabled: false });
    const list = await api.admin.get('/webhooks');
    const ids = list.body.map((w: { id: string }) => w.id);
    expect(ids.indexOf(b.id)).to.be.lessThan(ids.indexOf(a.id));
    expect(list.body.find((w: { id: string }) => w.id === a.id).enabled).to.equal(false);
    const missing = await api.admin.get('/webhooks/00000000-0000-4000-8000-000000000000');
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('webhook_not_found');
    expect((await api.admin.get('/webhooks/nope')).status).to.equal(400);
  });

  it('updates partially: null clears auth_header, filters and target_labels; validate is ignored; ranges are checked', async () => {
    const created = (
      await api.admin.post(
        '/webhooks',
        valid({ auth_header: 'A', filters: { agent_id: '7b0c6f1e-8a53-4b5e-9a59-3c9c1a0b2d11' }, target_labels: ['x'] }),
      )
    ).body;
    const res = await api.admin.put(`/webhooks/${created.id}`, {
      name: 'renamed',
      validate: true,
      auth_header: null,
      filters: null,
      target_labels: null,
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ name: 'renamed', has_auth_header: false, filters: null, target_labels: null, enabled: true });
    expect(res.body.event_types).to.deep.equal(['*']);
    const labels = await api.admin.put(`/webhooks/${created.id}`, { filters: { labels: ['a'] } });
    expect([labels.status, labels.body.code]).to.deep.equal([422, 'unsupported_field']);
    const shape = await api.admin.put(`/webhooks/${created.id}`, { enabled: 'yes' });
    expect([shape.status, shape.body.code]).to.deep.equal([422, 'invalid_request_body']);
    const missing = await api.admin.put('/webhooks/00000000-0000-4000-8000-000000000000', { max_retries: 99 });
    expect([missing.status, missing.body.code]).to.deep.equal([404, 'webhook_not_found']);
    const range = await api.admin.put(`/webhooks/${created.id}`, { timeout_seconds: 0 });
    expect([range.status, range.body.code]).to.deep.equal([422, 'invalid_webhook']);
    const scheme = await api.admin.put(`/webhooks/${created.id}`, { url: 'ftp://x' });
    expect([scheme.status, scheme.body.code]).to.deep.equal([400, 'invalid_url_scheme']);
    const url = await api.admin.put(`/webhooks/${created.id}`, { url: 'http://new.example/x', max_retries: 10, event_types: ['stack.*'] });
    expect(url.body).to.include({ max_retries: 10, has_url: true });
    expect(url.body.event_types).to.deep.equal(['stack.*']);
    expect(new Date(url.body.updated_at).getTime()).to.be.at.least(new Date(created.updated_at).getTime());
  });

  it('refuses an auth_header no HTTP client can send (line break, NUL, U+202E, emoji, Latin-1): 400 invalid_webhook, nothing stored', async () => {
    const bad = [
      'Bearer a\nX-Injected: 1',
      'Bearer a\r\n',
      'Bearer \u0000',
      'Bearer \u202Eabc',
      'Bearer 😀',
      'Bearer café',
      'x'.repeat(8193),
    ];
    const before = (await api.sql.query('SELECT count(*)::int AS n FROM webhook_subscriptions')).rows[0].n;
    for (const authHeader of bad) {
      const res = await api.admin.post('/webhooks', valid({ auth_header: authHeader }));
      expect(res.status, JSON.stringify(authHeader)).to.equal(400);
      expect(res.body).to.include({ code: 'invalid_webhook' });
      expect(res.body.details).to.deep.equal({ field: 'auth_header' });
      expect(res.body.message).to.match(/^auth_header /);
    }
    expect((await api.sql.query('SELECT count(*)::int AS n FROM webhook_subscriptions')).rows[0].n).to.equal(before);
    // Checked after the semantic checks create makes first, before the range checks.
    expect((await api.admin.post('/webhooks', valid({ name: '', auth_header: 'a\nb' }))).body.details).to.equal(undefined);
    expect((await api.admin.post('/webhooks', valid({ auth_header: 'a\nb', max_retries: 99 }))).status).to.equal(400);

    const created = (await api.admin.post('/webhooks', valid({ auth_header: 'Bearer ok' }))).body;
    for (const authHeader of bad) {
      const res = await api.admin.put(`/webhooks/${created.id}`, { auth_header: authHeader });
      expect([res.status, res.body.code], JSON.stringify(authHeader)).to.deep.equal([400, 'invalid_webhook']);
    }
    const { rows } = await api.sql.query('SELECT auth_header_encrypted FROM webhook_subscriptions WHERE id = $1', [created.id]);
    expect(decryptString(loadWebhookKey(KEY_HEX), rows[0].auth_header_encrypted)).to.equal('Bearer ok');
    expect((await api.admin.put(`/webhooks/${created.id}`, { auth_header: 'Token\tabc ~!' })).status).to.equal(200);
  });

  it('deletes (204, deliveries cascade) and audits create/update/delete; every change invalidates the dispatchers’ cache', async () => {
    const hints = await collectCore(api.natsUrl, 'brokkr.cache.invalidate.webhooks');
    try {
      const created = (await api.admin.post('/webhooks', valid({ name: 'audited' }))).body;
      await api.sql.query(
        `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload) VALUES ($1, 'stack.created', gen_random_uuid(), '{}')`,
        [created.id],
      );
      await api.admin.put(`/webhooks/${created.id}`, { enabled: false });
      await api.admin.post(`/webhooks/${created.id}/rotate-secret`);
      expect((await api.admin.delete(`/webhooks/${created.id}`)).status).to.equal(204);
      expect((await api.admin.delete(`/webhooks/${created.id}`)).body.code).to.equal('webhook_not_found');
      const { rows } = await api.sql.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1', [created.id]);
      expect(rows[0].n).to.equal(0);

      const audits = (await auditMessages(api.natsUrl)).filter((a) => a.resource_id === created.id);
      expect(audits.map((a) => a.action)).to.deep.equal(['webhook.created', 'webhook.updated', 'webhook.updated', 'webhook.deleted']);
      expect(audits[0]).to.include({ actor_type: 'admin', resource_type: 'webhook_subscription' });
      expect(audits[0]!.details).to.deep.equal({ name: 'audited', event_types: ['*'] });
      expect(audits[1]!.details).to.deep.equal({ name: 'audited', enabled: false });
      // Hints go out on one connection in request order: once a later change's hint is here, every earlier one is.
      const marker = (await api.admin.post('/webhooks', valid({ name: 'marker' }))).body;
      await eventually(() => hints.messages.some((m) => (m.data as { id: string }).id === marker.id), { what: 'the later hint' });
      expect(hints.messages.filter((m) => (m.data as { id: string }).id === created.id)).to.have.length(4);
    } finally {
      await hints.close();
    }
  });

  it('rotates the signing secret: a new one is returned once, the old one keeps signing for 24 h', async () => {
    const created = (await api.admin.post('/webhooks', valid())).body;
    const res = await api.admin.post(`/webhooks/${created.id}/rotate-secret`);
    expect(res.status).to.equal(200);
    expect(res.body.signing_secret)
      .to.match(/^whsec_/)
      .and.not.equal(created.signing_secret);
    const expires = new Date(res.body.previous_signing_secret_expires_at).getTime();
    expect(expires).to.be.within(Date.now() + 23.9 * 3600_000, Date.now() + 24.1 * 3600_000);
    const key = loadWebhookKey(KEY_HEX);
    const { rows } = await api.sql.query(
      'SELECT signing_secret_encrypted, previous_signing_secret_encrypted FROM webhook_subscriptions WHERE id = $1',
      [created.id],
    );
    expect(decryptString(key, rows[0].signing_secret_encrypted)).to.equal(res.body.signing_secret);
    expect(decryptString(key, rows[0].previous_signing_secret_encrypted)).to.equal(created.signing_secret);
    expect((await api.admin.post('/webhooks/00000000-0000-4000-8000-000000000000/rotate-secret')).body.code).to.equal('webhook_not_found');
  });
});
