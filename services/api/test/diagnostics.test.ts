import { expect } from 'chai';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import {
  ApiClient,
  adminGeneratorId,
  auditMessages,
  createStack,
  insertAgentRow,
  startTestApi,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

const RESULT = {
  pod_statuses: JSON.stringify([{ name: 'web-0', namespace: 'default', phase: 'Running', conditions: [], containers: [] }]),
  events: '[]',
  log_tails: JSON.stringify({ 'web-0/app': 'hello\n' }),
  collected_at: '2026-01-15T10:00:00.123Z',
};

/**
 * Diagnostics through the API: create, the pending list and its
 * long-poll, one claim per request, one result per request, and expiry by the real maintenance
 * service.
 */
describe('api diagnostics: lifecycle', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let objectId: string;

  async function agent(): Promise<{ id: string; pak: string; client: ApiClient }> {
    const row = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    return { id: row.id, pak: row.pak, client: api.admin.as(row.pak) };
  }

  async function request(agentId: string, body: Record<string, unknown> = {}): Promise<Record<string, string> & { id: string }> {
    const res = await api.admin.post(`/deployment-objects/${objectId}/diagnostics`, { agent_id: agentId, ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  /** Long-polls this api replica holds (the wake-up gauge every agent long-poll registers with). */
  async function waiting(): Promise<number> {
    const { text } = await new ApiClient(api.url, null).get('//metrics');
    const match = /^brokkr_target_state_long_polls_waiting(?:\{[^}]*\})? (\d+)/m.exec(text);
    return match ? Number(match[1]) : 0;
  }

  async function count(): Promise<number> {
    return (await api.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM diagnostic_requests')).rows[0]!.n;
  }

  before(async () => {
    api = await startTestApi(infra);
    const stack = await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) });
    const created = await api.admin.post(`/stacks/${stack.id}/deployment-objects`, {
      yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diag\n  namespace: default\ndata: {a: "1"}\n',
    });
    expect(created.status, created.text).to.equal(201);
    objectId = created.body.id;
  });
  after(() => api?.stop());

  describe('POST /deployment-objects/{id}/diagnostics', () => {
    it('creates a pending request that expires retention_minutes after creation (default 60)', async () => {
      const a = await agent();
      const row = await request(a.id, { requested_by: 'oncall@example.com' });
      expect(row).to.include({ agent_id: a.id, deployment_object_id: objectId, status: 'pending', requested_by: 'oncall@example.com' });
      expect(row).to.include({ claimed_at: null, completed_at: null });
      expect(Date.parse(row.expires_at!) - Date.parse(row.created_at!)).to.equal(60 * 60_000);
      const short = await request(a.id, { retention_minutes: 1 });
      expect(Date.parse(short.expires_at!) - Date.parse(short.created_at!)).to.equal(60_000);
      expect(short.requested_by).to.equal(null);
      const long = await request(a.id, { retention_minutes: 1440 });
      expect(Date.parse(long.expires_at!) - Date.parse(long.created_at!)).to.equal(1440 * 60_000);
    });

    it('refuses bad input with Brokkr codes and stores nothing', async () => {
      const a = await agent();
      const before = await count();
      const cases: [string, Record<string, unknown>, number, string][] = [
        [objectId, { agent_id: a.id, retention_minutes: 0 }, 400, 'invalid_diagnostic_request'],
        [objectId, { agent_id: a.id, retention_minutes: 1441 }, 400, 'invalid_diagnostic_request'],
        [objectId, { agent_id: a.id, requested_by: 'x'.repeat(256) }, 400, 'invalid_diagnostic_request'],
        [objectId, {}, 422, 'invalid_request_body'],
        [objectId, { agent_id: 'not-a-uuid' }, 422, 'invalid_request_body'],
        [objectId, { agent_id: a.id, retention_minutes: 1.5 }, 422, 'invalid_request_body'],
        ['00000000-0000-4000-8000-000000000000', { agent_id: a.id }, 404, 'deployment_object_not_found'],
        [objectId, { agent_id: '00000000-0000-4000-8000-000000000000' }, 404, 'agent_not_found'],
      ];
      for (const [id, body, status, code] of cases) {
        const res = await api.admin.post(`/deployment-objects/${id}/diagnostics`, body);
        expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([status, code]);
      }
      expect(await count()).to.equal(before);
    });
  });

  it('pending → claimed → completed: one claim, one result, readable by GET /diagnostics/{id}', async () => {
    const a = await agent();
    const row = await request(a.id);
    const pending = await a.client.get(`/agents/${a.id}/diagnostics/pending`);
    expect(pending.body.map((r: { id: string }) => r.id)).to.deep.equal([row.id]);

    const early = await a.client.post(`/diagnostics/${row.id}/result`, RESULT);
    expect([early.status, early.body.code]).to.deep.equal([409, 'diagnostic_not_claimed']);

    const claim = await a.client.post(`/diagnostics/${row.id}/claim`);
    expect(claim.status, claim.text).to.equal(200);
    expect(claim.body).to.include({ id: row.id, status: 'claimed', completed_at: null });
    expect(claim.body.claimed_at).to.be.a('string');
    const again = await a.client.post(`/diagnostics/${row.id}/claim`);
    expect([again.status, again.body.code, again.body.message]).to.deep.equal([
      409,
      'diagnostic_already_claimed',
      'Diagnostic request is already claimed',
    ]);
    expect((await a.client.get(`/agents/${a.id}/diagnostics/pending`)).body).to.deep.equal([]);
    expect((await api.admin.get(`/diagnostics/${row.id}`)).body).to.deep.include({ result: null });

    const empty = await a.client.post(`/diagnostics/${row.id}/result`, { ...RESULT, events: '' });
    expect([empty.status, empty.body.code]).to.deep.equal([400, 'invalid_diagnostic_result']);
    const badTime = await a.client.post(`/diagnostics/${row.id}/result`, { ...RESULT, collected_at: 'yesterday' });
    expect([badTime.status, badTime.body.code]).to.deep.equal([422, 'invalid_request_body']);

    const result = await a.client.post(`/diagnostics/${row.id}/result`, RESULT);
    expect(result.status, result.text).to.equal(201);
    expect(result.body).to.include({ request_id: row.id, pod_statuses: RESULT.pod_statuses, events: '[]', log_tails: RESULT.log_tails });
    expect(result.body.collected_at).to.equal(RESULT.collected_at);

    const second = await a.client.post(`/diagnostics/${row.id}/result`, RESULT);
    expect([second.status, second.body.code]).to.deep.equal([409, 'diagnostic_not_claimed']);

    const read = await a.client.get(`/diagnostics/${row.id}`);
    expect(read.status).to.equal(200);
    expect(read.body.request).to.include({ id: row.id, status: 'completed', claimed_at: claim.body.claimed_at });
    expect(read.body.request.completed_at).to.be.a('string');
    expect(read.body.result).to.deep.equal(result.body);
    const stored = await api.sql.query('SELECT count(*)::int AS n FROM diagnostic_results WHERE request_id = $1', [row.id]);
    expect(stored.rows[0].n).to.equal(1);

    // Audited (ours: Brokkr writes none for diagnostics), by the real actor.
    await eventually(async () => (await auditMessages(api.natsUrl)).filter((m) => m.resource_id === row.id).length === 3, {
      what: 'three audit entries',
    });
    const audit = (await auditMessages(api.natsUrl)).filter((m) => m.resource_id === row.id);
    expect(audit.map((m) => [m.action, m.actor_type, m.resource_type])).to.deep.equal([
      ['diagnostic.requested', 'admin', 'diagnostic_request'],
      ['diagnostic.claimed', 'agent', 'diagnostic_request'],
      ['diagnostic.completed', 'agent', 'diagnostic_request'],
    ]);
  });

  it('lists only pending requests of the agent, oldest first', async () => {
    const a = await agent();
    const b = await agent();
    const first = await request(a.id);
    const second = await request(a.id);
    await request(b.id);
    const claimed = await request(a.id);
    expect((await a.client.post(`/diagnostics/${claimed.id}/claim`)).status).to.equal(200);
    const list = await a.client.get(`/agents/${a.id}/diagnostics/pending`);
    expect(list.body.map((r: { id: string }) => r.id)).to.deep.equal([first.id, second.id]);
  });

  it('concurrent claims of one request (two clients with the same agent PAK, and the admin): exactly one wins', async () => {
    const a = await agent();
    const twin = new ApiClient(api.url, a.pak);
    for (let round = 0; round < 10; round++) {
      const row = await request(a.id);
      const claims: Promise<ApiResponse>[] = [];
      for (let i = 0; i < 6; i++) claims.push([a.client, twin, api.admin][i % 3]!.post(`/diagnostics/${row.id}/claim`));
      const answers = await Promise.all(claims);
      expect(
        answers.filter((r) => r.status === 200),
        `round ${round}`,
      ).to.have.length(1);
      for (const r of answers.filter((r) => r.status !== 200))
        expect([r.status, r.body.code]).to.deep.equal([409, 'diagnostic_already_claimed']);
    }
  });

  it('the pending long-poll is woken at once when a request for the agent is created', async () => {
    const a = await agent();
    const before = await waiting();
    const poll = a.client.get(`/agents/${a.id}/diagnostics/pending`, { query: { wait: 60 } });
    // Held (an empty list waits in the api) before the request is created: the answer can only come from the wake-up.
    await eventually(async () => (await waiting()) > before, { timeoutMs: 30_000, what: 'the request to be held' });
    const row = await request(a.id);
    const res = await poll;
    expect(res.status).to.equal(200);
    expect(res.body.map((r: { id: string }) => r.id)).to.deep.equal([row.id]);
    const bad = await a.client.get(`/agents/${a.id}/diagnostics/pending`, { query: { wait: 'soon' } });
    expect([bad.status, bad.body.code]).to.deep.equal([400, 'invalid_query']);
  });

  describe('expiry by the maintenance service', () => {
    let maintenance: RunningService | undefined;
    before(async () => {
      const port = await freePort();
      maintenance = await spawnService({
        service: 'maintenance',
        env: {
          BROKKR__DATABASE__URL: api.database.url,
          BROKKR__NATS__URL: api.natsUrl,
          BROKKR__HEALTH__PORT: String(port),
          BROKKR__BROKER__DIAGNOSTIC_CLEANUP_INTERVAL_SECONDS: '1',
        },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
      });
    });
    after(() => maintenance?.stop());

    it('unclaimed past expires_at → expired; claimed → failed (claimed_at kept); old finished ones are deleted', async () => {
      const a = await agent();
      const unclaimed = await request(a.id, { retention_minutes: 1 });
      const claimed = await request(a.id, { retention_minutes: 1 });
      const live = await request(a.id);
      const claim = await a.client.post(`/diagnostics/${claimed.id}/claim`);
      expect(claim.status).to.equal(200);
      // The minute passes (moved back instead of waited for).
      await api.sql.query(`UPDATE diagnostic_requests SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [
        [unclaimed.id, claimed.id],
      ]);
      // Past expiry before the sweep: no longer listed, and no longer claimable.
      expect((await a.client.get(`/agents/${a.id}/diagnostics/pending`)).body.map((r: { id: string }) => r.id)).to.deep.equal([live.id]);

      const read = async (id: string) => (await api.admin.get(`/diagnostics/${id}`)).body.request as Record<string, unknown>;
      await eventually(async () => (await read(unclaimed.id)).status === 'expired' && (await read(claimed.id)).status === 'failed', {
        timeoutMs: 60_000,
        what: 'the sweep',
      });
      expect(await read(unclaimed.id)).to.include({ claimed_at: null, completed_at: null });
      const failed = await read(claimed.id);
      expect(failed.claimed_at).to.equal(claim.body.claimed_at);
      expect(failed.completed_at).to.be.a('string');
      expect((await read(live.id)).status).to.equal('pending');

      const late = await a.client.post(`/diagnostics/${claimed.id}/result`, RESULT);
      expect([late.status, late.body.code]).to.deep.equal([409, 'diagnostic_not_claimed']);
      const reclaim = await a.client.post(`/diagnostics/${unclaimed.id}/claim`);
      expect([reclaim.status, reclaim.body.message]).to.deep.equal([409, 'Diagnostic request is already expired']);

      // Finished requests older than DIAGNOSTIC_MAX_AGE_HOURS (1) go, results with them; live ones stay.
      await api.sql.query(`UPDATE diagnostic_requests SET created_at = now() - interval '2 hours' WHERE id = ANY($1)`, [
        [unclaimed.id, claimed.id, live.id],
      ]);
      await eventually(async () => (await api.admin.get(`/diagnostics/${unclaimed.id}`)).status === 404, {
        timeoutMs: 60_000,
        what: 'cleanup',
      });
      const gone = await api.admin.get(`/diagnostics/${claimed.id}`);
      expect([gone.status, gone.body.code]).to.deep.equal([404, 'diagnostic_not_found']);
      expect((await read(live.id)).status).to.equal('pending');
    });

    it('a request past expiry but not yet swept is refused at claim time', async () => {
      const a = await agent();
      const row = await request(a.id);
      await api.sql.query(`UPDATE diagnostic_requests SET expires_at = now() - interval '1 second' WHERE id = $1`, [row.id]);
      const claim = await a.client.post(`/diagnostics/${row.id}/claim`);
      expect([claim.status, claim.body.code]).to.deep.equal([409, 'diagnostic_already_claimed']);
      expect(['pending', 'expired']).to.include((await api.admin.get(`/diagnostics/${row.id}`)).body.request.status);
    });
  });
});
