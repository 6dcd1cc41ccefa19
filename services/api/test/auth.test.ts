import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { generatePak } from '@brokkr/pak';
import { auditMessages, createGenerator, startTestApi, type TestApi } from './support/index.ts';

describe('api auth (PAK)', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('accepts `Bearer <pak>`, `bearer <pak>` and the bare PAK', async () => {
    const expected = { admin: true, agent: null, generator: null, readonly: false };
    const bearer = await api.admin.post('/auth/pak');
    expect(bearer.status).to.equal(200);
    expect(bearer.body).to.deep.equal(expected);
    for (const value of [`bearer ${api.adminPak}`, api.adminPak, `  ${api.adminPak}  `]) {
      const res = await api.anonymous.post('/auth/pak', undefined, { headers: { authorization: value } });
      expect(res.status, value).to.equal(200);
      expect(res.body).to.deep.equal(expected);
    }
  });

  it('resolves a generator PAK to the generator', async () => {
    const { generator, client } = await createGenerator(api.admin);
    const res = await client.post('/auth/pak');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ admin: false, agent: null, generator: generator.id, readonly: false });
  });

  it('resolves an agent PAK to the agent', async () => {
    const { pak, hash } = generatePak();
    const { rows } = await api.sql.query<{ id: string }>(
      `INSERT INTO agents (name, cluster_name, pak_hash) VALUES ('auth-agent', 'c1', $1) RETURNING id`,
      [hash],
    );
    const res = await api.anonymous.post('/auth/pak', undefined, { pak });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ admin: false, agent: rows[0]!.id, generator: null, readonly: false });
  });

  it('answers 401 JSON for a missing header, a malformed PAK and an unknown PAK', async () => {
    const missing = await api.anonymous.post('/auth/pak');
    expect(missing.status).to.equal(401);
    expect(missing.body.code).to.equal('unauthorized');
    for (const pak of ['garbage', 'brokkr_BRabc', 'a_b_c_d', generatePak().pak, 'brokkr_BR\u00e9\u00e9_x']) {
      const res = await api.anonymous.post('/auth/pak', undefined, { headers: { authorization: `Bearer ${encodeURIComponent(pak)}` } });
      expect(res.status, pak).to.equal(401);
      expect(res.body.code).to.equal('unauthorized');
    }
    const unknownRoute = await api.anonymous.get('/no-such-route');
    expect(unknownRoute.status).to.equal(401);
  });

  it('audits failed authentication with path, client address and user agent, but not a missing header', async () => {
    await api.anonymous.get('/generators', { headers: { 'user-agent': 'probe-missing/1.0' } });
    await api.anonymous.get('/generators', {
      headers: { authorization: 'Bearer nope', 'x-forwarded-for': '203.0.113.7, 10.0.0.1', 'user-agent': 'probe/1.0' },
    });
    const entry = await eventually(async () => (await auditMessages(api.natsUrl, 'auth.failed')).find((e) => e.user_agent === 'probe/1.0'));
    // No trusted proxy here: the socket's address, not the header (hub-plumbing.test.ts covers the proxies).
    expect(entry).to.include({ actor_type: 'system', actor_id: null, resource_type: 'system', ip_address: '127.0.0.1' });
    expect(entry.details).to.deep.equal({ reason: 'invalid_pak', path: '/generators' });
    const all = await auditMessages(api.natsUrl, 'auth.failed');
    expect(all.filter((e) => e.user_agent === 'probe-missing/1.0')).to.have.length(0);
  });

  it('rate-limits auth.failed entries and counts the suppressed ones', async () => {
    const metric = async () => {
      const text = (await api.anonymous.get('//metrics')).text;
      const m = /brokkr_auth_failed_audit_suppressed_total\{[^}]*\} (\d+)/.exec(text);
      return Number(m?.[1] ?? 0);
    };
    const auditedBefore = (await auditMessages(api.natsUrl, 'auth.failed')).length;
    const suppressedBefore = await metric();
    const total = 300;
    for (let batch = 0; batch < total / 50; batch++) {
      await Promise.all(Array.from({ length: 50 }, () => api.anonymous.post('/auth/pak', undefined, { headers: { authorization: 'x' } })));
    }
    // Every failure is accounted for: written or counted as suppressed.
    const [audited, suppressed] = await eventually(async () => {
      const a = (await auditMessages(api.natsUrl, 'auth.failed')).length - auditedBefore;
      const s = (await metric()) - suppressedBefore;
      return a + s === total ? ([a, s] as const) : undefined;
    });
    expect(audited).to.be.greaterThan(0);
    expect(suppressed).to.be.greaterThan(0);
    expect(audited).to.be.lessThan(total);
  });
});
