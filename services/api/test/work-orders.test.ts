import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  ApiClient,
  auditMessages,
  createGenerator,
  insertAgentRow,
  readStream,
  RFC3339_Z,
  startTestApi,
  uniqueName,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

/** Work orders over HTTP: the queue, targeting, claim, complete, retries and the log. */
describe('api work orders', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  interface Agent {
    id: string;
    client: ApiClient;
  }

  async function agent(options: { labels?: string[]; annotations?: Record<string, string> } = {}): Promise<Agent> {
    const row = await insertAgentRow(api.sql, { labels: options.labels ?? [], status: 'ACTIVE' });
    for (const [key, value] of Object.entries(options.annotations ?? {})) {
      await api.sql.query('INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [row.id, key, value]);
    }
    return { id: row.id, client: api.admin.as(row.pak) };
  }

  async function order(body: Record<string, unknown>) {
    const res = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'kind: Job', ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; status: string; work_type: string; [k: string]: unknown };
  }

  const claim = (who: Agent, id: string, agentId = who.id) => who.client.post(`/work-orders/${id}/claim`, { agent_id: agentId });
  const complete = (client: ApiClient, id: string, body: Record<string, unknown>) => client.post(`/work-orders/${id}/complete`, body);

  before(async () => {
    api = await startTestApi(infra);
  });
  after(() => api?.stop());

  describe('create', () => {
    it('stores a PENDING order with Brokkr defaults and its targeting', async () => {
      const a = await agent();
      const created = await order({ targeting: { agent_ids: [a.id], labels: ['gpu'], annotations: { zone: 'a' } } });
      expect(created).to.include({
        status: 'PENDING',
        work_type: 'custom',
        yaml_content: 'kind: Job',
        max_retries: 3,
        retry_count: 0,
        backoff_seconds: 60,
        claim_timeout_seconds: 3600,
        claimed_by: null,
        claimed_at: null,
        next_retry_after: null,
        last_error: null,
        last_error_at: null,
      });
      expect(created.created_at).to.match(RFC3339_Z);
      const targets = await api.sql.query('SELECT agent_id FROM work_order_targets WHERE work_order_id = $1', [created.id]);
      expect(targets.rows.map((r) => r.agent_id)).to.deep.equal([a.id]);
      const labels = await api.sql.query('SELECT label FROM work_order_labels WHERE work_order_id = $1', [created.id]);
      expect(labels.rows.map((r) => r.label)).to.deep.equal(['gpu']);
      const annotations = await api.sql.query('SELECT key, value FROM work_order_annotations WHERE work_order_id = $1', [created.id]);
      expect(annotations.rows).to.deep.equal([{ key: 'zone', value: 'a' }]);
    });

    it('merges the legacy target_agent_ids into targeting.agent_ids (duplicates once)', async () => {
      const [a, b] = [await agent(), await agent()];
      const created = await order({ target_agent_ids: [a.id, b.id], targeting: { agent_ids: [a.id] }, max_retries: 0 });
      const targets = await api.sql.query('SELECT agent_id FROM work_order_targets WHERE work_order_id = $1 ORDER BY agent_id', [
        created.id,
      ]);
      expect(targets.rows.map((r) => r.agent_id)).to.deep.equal([a.id, b.id].sort());
      expect(created.max_retries).to.equal(0);
      // The legacy field alone targets too.
      const legacy = await order({ target_agent_ids: [b.id] });
      expect((await claim(b, legacy.id)).status).to.equal(200);
    });

    it('refuses an order without targeting (400 no_targeting_specified), also when every label is unusable', async () => {
      for (const body of [{}, { targeting: {} }, { targeting: { labels: [' ', 'has space', 'x'.repeat(65)] }, target_agent_ids: [] }]) {
        const res = await api.admin.post('/work-orders', { work_type: 'custom', yaml_content: 'x', ...body });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('no_targeting_specified');
      }
    });

    it('refuses blank fields and bad numbers with 400 invalid_work_order', async () => {
      const targeting = { labels: ['l'] };
      const bad = [
        { work_type: ' ', yaml_content: 'x' },
        { work_type: 'custom', yaml_content: '' },
        { work_type: 'x'.repeat(51), yaml_content: 'x' },
        { work_type: 'custom', yaml_content: 'x', max_retries: -1 },
        { work_type: 'custom', yaml_content: 'x', backoff_seconds: 0 },
        { work_type: 'custom', yaml_content: 'x', claim_timeout_seconds: 0 },
        { work_type: 'custom', yaml_content: 'x', claim_timeout_seconds: 2 ** 31 },
      ];
      for (const body of bad) {
        const res = await api.admin.post('/work-orders', { ...body, targeting });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code).to.equal('invalid_work_order');
      }
      const missing = await api.admin.post('/work-orders', { yaml_content: 'x', targeting });
      expect(missing.status).to.equal(422);
      expect(missing.body.code).to.equal('invalid_request_body');
    });

    it('refuses an unknown agent id with 422 foreign_key_violation and leaves nothing behind (no order, no event)', async () => {
      const workType = uniqueName('fk');
      const res = await api.admin.post('/work-orders', {
        work_type: workType,
        yaml_content: 'x',
        targeting: { agent_ids: ['00000000-0000-4000-8000-000000000001'] },
      });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('foreign_key_violation');
      expect((await api.sql.query('SELECT 1 FROM work_orders WHERE work_type = $1', [workType])).rowCount).to.equal(0);
      const outbox = await api.sql.query("SELECT 1 FROM outbox WHERE payload->'data'->>'work_type' = $1", [workType]);
      expect(outbox.rowCount).to.equal(0);
    });
  });

  describe('queue and lookups', () => {
    it('lists the active queue newest first, filtered by status and work_type; 404 for an unknown id', async () => {
      const a = await agent();
      const workType = uniqueName('wt').slice(0, 40);
      const first = await order({ work_type: workType, targeting: { agent_ids: [a.id] } });
      const second = await order({ work_type: workType, targeting: { agent_ids: [a.id] } });
      expect((await claim(a, first.id)).status).to.equal(200);
      const all = await api.admin.get('/work-orders', { query: { work_type: workType } });
      expect(all.body.map((o: { id: string }) => o.id)).to.deep.equal([second.id, first.id]);
      const claimed = await api.admin.get('/work-orders', { query: { work_type: workType, status: 'CLAIMED' } });
      expect(claimed.body.map((o: { id: string }) => o.id)).to.deep.equal([first.id]);
      expect((await api.admin.get(`/work-orders/${second.id}`)).body).to.include({ id: second.id, status: 'PENDING' });
      const missing = await api.admin.get('/work-orders/00000000-0000-4000-8000-000000000002');
      expect([missing.status, missing.body.code]).to.deep.equal([404, 'work_order_not_found']);
      expect((await api.admin.get('/work-orders/not-a-uuid')).status).to.equal(400);
    });

    it('DELETE removes an active order (204), then 404', async () => {
      const a = await agent();
      const created = await order({ targeting: { agent_ids: [a.id] } });
      expect((await api.admin.delete(`/work-orders/${created.id}`)).status).to.equal(204);
      const again = await api.admin.delete(`/work-orders/${created.id}`);
      expect([again.status, again.body.code]).to.deep.equal([404, 'work_order_not_found']);
      expect((await api.admin.get(`/work-orders/${created.id}`)).status).to.equal(404);
      expect((await api.sql.query('SELECT 1 FROM work_order_targets WHERE work_order_id = $1', [created.id])).rowCount).to.equal(0);
    });
  });

  describe('pending list and claim', () => {
    it('lists PENDING orders targeting the agent by id, any label or any annotation, oldest first', async () => {
      const label = uniqueName('lbl');
      const me = await agent({ labels: [label, 'other'], annotations: { team: 'me' } });
      const someone = await agent({ labels: ['other-only'], annotations: { team: 'them' } });
      const byId = await order({ targeting: { agent_ids: [me.id] } });
      const byLabel = await order({ targeting: { labels: ['nobody', label] } });
      const byAnnotation = await order({ work_type: 'build', targeting: { annotations: { team: 'me', x: 'y' } } });
      await order({ targeting: { annotations: { team: 'them' } } });
      await order({ targeting: { agent_ids: [someone.id] } });
      const res = await me.client.get(`/agents/${me.id}/work-orders/pending`);
      expect(res.status).to.equal(200);
      const ids = res.body.map((o: { id: string }) => o.id);
      expect(ids.filter((id: string) => [byId.id, byLabel.id, byAnnotation.id].includes(id))).to.deep.equal([
        byId.id,
        byLabel.id,
        byAnnotation.id,
      ]);
      expect(ids).to.have.length(3);
      const builds = await me.client.get(`/agents/${me.id}/work-orders/pending`, { query: { work_type: 'build' } });
      expect(builds.body.map((o: { id: string }) => o.id)).to.deep.equal([byAnnotation.id]);
      // Claimed orders leave the list.
      expect((await claim(me, byId.id)).status).to.equal(200);
      const after = await me.client.get(`/agents/${me.id}/work-orders/pending`);
      expect(after.body.map((o: { id: string }) => o.id)).to.deep.equal([byLabel.id, byAnnotation.id]);
    });

    it('claims once: 200 CLAIMED for the first, 404 work_order_not_claimable after, and for an untargeted agent', async () => {
      const [a, b, stranger] = [await agent(), await agent(), await agent()];
      const created = await order({ targeting: { agent_ids: [a.id, b.id] } });
      const notTargeted = await claim(stranger, created.id);
      expect([notTargeted.status, notTargeted.body.code]).to.deep.equal([404, 'work_order_not_claimable']);
      const first = await claim(a, created.id);
      expect(first.status, first.text).to.equal(200);
      expect(first.body).to.include({ id: created.id, status: 'CLAIMED', claimed_by: a.id });
      expect(first.body.claimed_at).to.match(RFC3339_Z);
      const second = await claim(b, created.id);
      expect([second.status, second.body.code]).to.deep.equal([404, 'work_order_not_claimable']);
      const missing = await claim(a, '00000000-0000-4000-8000-000000000003');
      expect([missing.status, missing.body.code]).to.deep.equal([404, 'work_order_not_claimable']);
    });

    it('claim for another agent is 403 agent_pak_mismatch; an admin may claim for a targeted agent', async () => {
      const [a, b] = [await agent(), await agent()];
      const created = await order({ targeting: { agent_ids: [a.id] } });
      const mismatch = await claim(b, created.id, a.id);
      expect([mismatch.status, mismatch.body.code]).to.deep.equal([403, 'agent_pak_mismatch']);
      const byAdmin = await api.admin.post(`/work-orders/${created.id}/claim`, { agent_id: a.id });
      expect(byAdmin.status).to.equal(200);
      expect(byAdmin.body.claimed_by).to.equal(a.id);
      const bad = await api.admin.post(`/work-orders/${created.id}/claim`, { agent_id: 'nope' });
      expect(bad.status).to.equal(422);
    });
  });

  describe('complete', () => {
    it('success: 200 WorkOrderLog, the order leaves the queue, GET falls back to the log (COMPLETED)', async () => {
      const a = await agent();
      const created = await order({ targeting: { agent_ids: [a.id] } });
      expect((await claim(a, created.id)).status).to.equal(200);
      const res = await complete(a.client, created.id, { success: true, message: 'sha256:abc' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({
        id: created.id,
        work_type: 'custom',
        claimed_by: a.id,
        success: true,
        retries_attempted: 0,
        result_message: 'sha256:abc',
        yaml_content: 'kind: Job',
      });
      expect(res.body.completed_at).to.match(RFC3339_Z);
      expect((await api.sql.query('SELECT 1 FROM work_orders WHERE id = $1', [created.id])).rowCount).to.equal(0);
      const read = await api.admin.get(`/work-orders/${created.id}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.include({
        id: created.id,
        status: 'COMPLETED',
        updated_at: res.body.completed_at,
        retry_count: 0,
        max_retries: 0,
        backoff_seconds: 0,
        claim_timeout_seconds: 0,
        claimed_by: a.id,
        last_error: null,
      });
      const entry = await api.admin.get(`/work-order-log/${created.id}`);
      expect(entry.body).to.deep.equal(res.body);
      const again = await complete(a.client, created.id, { success: true });
      expect([again.status, again.body.code]).to.deep.equal([404, 'work_order_not_found']);
      const noEntry = await api.admin.get('/work-order-log/00000000-0000-4000-8000-000000000004');
      expect([noEntry.status, noEntry.body.code]).to.deep.equal([404, 'work_order_log_entry_not_found']);
    });

    it('only the claiming agent or an admin completes: 403 work_order_not_claimed_by_agent', async () => {
      const [a, b] = [await agent(), await agent()];
      const generator = await createGenerator(api.admin);
      const created = await order({ targeting: { agent_ids: [a.id, b.id] } });
      // Not claimed yet: no agent may complete it.
      const unclaimed = await complete(a.client, created.id, { success: true });
      expect([unclaimed.status, unclaimed.body.code]).to.deep.equal([403, 'work_order_not_claimed_by_agent']);
      expect((await claim(a, created.id)).status).to.equal(200);
      for (const client of [b.client, generator.client]) {
        const res = await complete(client, created.id, { success: true });
        expect([res.status, res.body.code]).to.deep.equal([403, 'work_order_not_claimed_by_agent']);
      }
      const byAdmin = await complete(api.admin, created.id, { success: false, retryable: false, message: 'cancelled' });
      expect(byAdmin.status).to.equal(200);
      expect(byAdmin.body).to.include({ success: false, result_message: 'cancelled', claimed_by: a.id });
    });

    it('retries at backoff_seconds × 2^n until max_retries, then logs the failure', async () => {
      const a = await agent();
      const created = await order({ max_retries: 2, backoff_seconds: 10, targeting: { agent_ids: [a.id] } });
      const delays: number[] = [];
      for (let n = 1; n <= 2; n++) {
        expect((await claim(a, created.id)).status).to.equal(200);
        const res = await complete(a.client, created.id, { success: false, message: `boom ${n}` });
        expect(res.status, res.text).to.equal(202);
        expect(res.body).to.deep.equal({ status: 'retry_scheduled' });
        const row = (await api.admin.get(`/work-orders/${created.id}`)).body;
        expect(row).to.include({ status: 'RETRY_PENDING', retry_count: n, claimed_by: null, claimed_at: null, last_error: `boom ${n}` });
        delays.push((Date.parse(row.next_retry_after) - Date.parse(row.last_error_at)) / 1000);
        // Not claimable until maintenance promotes it (what the task does, done here by hand).
        expect((await claim(a, created.id)).status).to.equal(404);
        await api.sql.query("UPDATE work_orders SET status = 'PENDING', next_retry_after = NULL WHERE id = $1", [created.id]);
      }
      expect(delays.map((d) => Math.round(d))).to.deep.equal([20, 40]);
      expect((await claim(a, created.id)).status).to.equal(200);
      const last = await complete(a.client, created.id, { success: false });
      expect(last.status).to.equal(200);
      expect(last.body).to.include({ success: false, retries_attempted: 2, result_message: 'Unknown error' });
      const read = (await api.admin.get(`/work-orders/${created.id}`)).body;
      expect(read).to.include({ status: 'FAILED', retry_count: 2, last_error: 'Unknown error', last_error_at: last.body.completed_at });
    });

    it('a non-retryable failure is logged at once; max_retries 0 never retries', async () => {
      const a = await agent();
      const first = await order({ targeting: { agent_ids: [a.id] } });
      expect((await claim(a, first.id)).status).to.equal(200);
      const res = await complete(a.client, first.id, { success: false, retryable: false, message: 'bad yaml' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ success: false, retries_attempted: 0, result_message: 'bad yaml' });
      const second = await order({ max_retries: 0, targeting: { agent_ids: [a.id] } });
      expect((await claim(a, second.id)).status).to.equal(200);
      expect((await complete(a.client, second.id, { success: false })).status).to.equal(200);
    });

    it('an admin may complete a PENDING order (status is not checked)', async () => {
      const a = await agent();
      const created = await order({ targeting: { agent_ids: [a.id] } });
      const res = await complete(api.admin, created.id, { success: true });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ claimed_by: null, claimed_at: null, success: true, result_message: null });
    });
  });

  describe('log', () => {
    it('filters by work_type, success and agent_id, newest first, with limit', async () => {
      const a = await agent();
      const workType = uniqueName('log').slice(0, 40);
      const ids: string[] = [];
      for (const success of [true, false, true]) {
        const created = await order({ work_type: workType, targeting: { agent_ids: [a.id] } });
        expect((await claim(a, created.id)).status).to.equal(200);
        expect((await complete(a.client, created.id, { success, retryable: false })).status).to.equal(200);
        ids.push(created.id);
      }
      const all = await api.admin.get('/work-order-log', { query: { work_type: workType } });
      expect(all.body.map((e: { id: string }) => e.id)).to.deep.equal([...ids].reverse());
      const failed = await api.admin.get('/work-order-log', { query: { work_type: workType, success: 'false' } });
      expect(failed.body.map((e: { id: string }) => e.id)).to.deep.equal([ids[1]]);
      const mine = await api.admin.get('/work-order-log', { query: { agent_id: a.id, limit: 2 } });
      expect(mine.body.map((e: { id: string }) => e.id)).to.deep.equal([ids[2], ids[1]]);
      expect((await api.admin.get('/work-order-log', { query: { limit: -1 } })).status).to.equal(400);
      expect((await api.admin.get('/work-order-log', { query: { success: 'maybe' } })).status).to.equal(400);
    });
  });

  describe('events and audit', () => {
    it('publishes workorder.created/claimed/completed/failed with the documented data, audits every transition', async () => {
      const a = await agent();
      const ok = await order({ targeting: { agent_ids: [a.id] } });
      const claimedOk = await claim(a, ok.id);
      expect(claimedOk.status).to.equal(200);
      expect((await complete(a.client, ok.id, { success: true, message: 'done' })).status).to.equal(200);
      const bad = await order({ max_retries: 1, targeting: { agent_ids: [a.id] } });
      expect((await claim(a, bad.id)).status).to.equal(200);
      expect((await complete(a.client, bad.id, { success: false, message: 'e1' })).status).to.equal(202);
      expect((await complete(api.admin, bad.id, { success: false, retryable: false, message: 'e2' })).status).to.equal(200);

      // The publish follows the commit and is acked after the response (ADR 0028): wait for the
      // last transition's event rather than read the stream once.
      const isAbout = (e: EventEnvelope, id: string) =>
        (e.data as Record<string, unknown>).work_order_id === id || (e.data as Record<string, unknown>).work_order_log_id === id;
      const events = await eventually(
        async () => {
          const read = (await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS')).map((m) => m.data);
          const done = [ok.id, bad.id].every((id) => read.filter((e) => isAbout(e, id)).length >= 3);
          return done ? read : undefined;
        },
        { what: 'three events about each order on BROKKR_EVENTS' },
      );
      const about = (id: string) => events.filter((e) => isAbout(e, id));
      expect(about(ok.id).map((e) => e.event_type)).to.deep.equal(['workorder.created', 'workorder.claimed', 'workorder.completed']);
      const [createdEvt, claimedEvt, completedEvt] = about(ok.id).map((e) => e.data);
      expect(Object.keys(createdEvt!).sort()).to.deep.equal(['created_at', 'status', 'work_order_id', 'work_type']);
      // The timestamps are the stored ones, as the API answered them (the statement builds the data).
      expect(createdEvt).to.deep.equal({ work_order_id: ok.id, work_type: 'custom', status: 'PENDING', created_at: ok.created_at });
      expect(claimedEvt).to.include({ work_order_id: ok.id, work_type: 'custom', agent_id: a.id, claimed_at: claimedOk.body.claimed_at });
      expect(Object.keys(claimedEvt!).sort()).to.deep.equal(['agent_id', 'claimed_at', 'work_order_id', 'work_type']);
      expect(completedEvt).to.include({ work_order_log_id: ok.id, success: true, result_message: 'done', agent_id: a.id });
      expect(Object.keys(completedEvt!).sort()).to.deep.equal([
        'agent_id',
        'completed_at',
        'result_message',
        'success',
        'work_order_log_id',
        'work_type',
      ]);
      expect(about(bad.id).map((e) => e.event_type)).to.deep.equal(['workorder.created', 'workorder.claimed', 'workorder.failed']);
      // The admin completed it after the retry reset the claim: agent_id is null then.
      expect(about(bad.id)[2]!.data).to.include({ success: false, result_message: 'e2', agent_id: null });

      const audit = (await auditMessages(api.natsUrl)).filter((m) => m.resource_id === ok.id || m.resource_id === bad.id);
      const summary = audit.map((m) => `${m.action}:${m.actor_type}:${m.resource_id === ok.id ? 'ok' : 'bad'}`);
      expect(summary).to.have.members([
        'workorder.created:admin:ok',
        'workorder.claimed:agent:ok',
        'workorder.completed:agent:ok',
        'workorder.created:admin:bad',
        'workorder.claimed:agent:bad',
        'workorder.retry:agent:bad',
        'workorder.failed:admin:bad',
      ]);
      expect(audit.every((m) => m.resource_type === 'work_order')).to.equal(true);
      expect(audit.find((m) => m.action === 'workorder.failed')!.details).to.include({ retryable: false });
      expect(audit.find((m) => m.action === 'workorder.created')!.details).to.include({ work_type: 'custom' });
      expect(audit.find((m) => m.action === 'workorder.claimed' && m.resource_id === ok.id)!.actor_id).to.equal(a.id);
    });
  });
});
