import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  adminGeneratorId,
  auditMessages,
  collectCore,
  createGenerator,
  createStack,
  insertAgentRow,
  readStream,
  startTestApi,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

const YAML = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: preview\n  namespace: default\ndata: {a: "1"}\n';

const RESULT = {
  objects: [
    {
      api_version: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'preview',
      action: 'changed',
      diff: [{ path: 'data.a', before: '"0"', after: '"1"' }],
    },
  ],
};

/**
 * The fleet-wide diff preview through the API: create (same inputs and YAML
 * validation as deployment objects, no deployment object stored), the targeted agents fixed at
 * creation and woken, the pending list and its long-poll, one result per agent, the aggregate,
 * who may do what, and bad input.
 */
describe('api previews', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let generatorId: string;
  let stackId: string;

  async function agent(status = 'ACTIVE'): Promise<{ id: string; pak: string; client: ApiClient }> {
    const row = await insertAgentRow(api.sql, { status, targets: [stackId] });
    return { id: row.id, pak: row.pak, client: api.admin.as(row.pak) };
  }

  async function counts(): Promise<{ previews: number; objects: number }> {
    const { rows } = await api.sql.query<{ previews: number; objects: number }>(
      `SELECT (SELECT count(*)::int FROM previews) AS previews,
              (SELECT count(*)::int FROM deployment_objects WHERE stack_id = $1) AS objects`,
      [stackId],
    );
    return rows[0]!;
  }

  async function previewEvents(id: string): Promise<EventEnvelope[]> {
    const all = await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS');
    return all.map((m) => m.data).filter((e) => e.event_type.startsWith('preview.') && e.data.preview_id === id);
  }

  before(async () => {
    api = await startTestApi(infra);
    generatorId = await adminGeneratorId(api.admin);
  });
  // A stack per test: the agents of one test are not targeted by the next one's previews.
  beforeEach(async () => {
    stackId = (await createStack(api.admin, { generator_id: generatorId })).id;
  });
  after(() => api?.stop());

  it('creates a preview for the ACTIVE targeted agents, wakes them, stores no deployment object', async () => {
    const a = await agent();
    const b = await agent();
    const inactive = await agent('INACTIVE');
    const before = await counts();
    const notices = await collectCore(api.natsUrl, `brokkr.notify.agent.*`);
    const res = await api.admin.post(`/stacks/${stackId}/previews`, { yaml_content: YAML });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ stack_id: stackId, status: 'pending', created_by: 'admin', is_deletion_marker: false });
    const ids = (res.body.agents as { agent_id: string; status: string }[]).map((x) => x.agent_id);
    expect(ids).to.have.members([a.id, b.id]);
    expect(ids).not.to.include(inactive.id);
    expect(res.body.counts).to.deep.equal({ agents: 2, pending: 2, clean: 0, changes: 0, error: 0, expired: 0 });
    const after = await counts();
    expect(after.objects).to.equal(before.objects);
    expect(after.previews).to.equal(before.previews + 1);
    // Both agents are woken (the hint travels after commit).
    await eventually(async () => notices.messages.length >= 2);
    await notices.close();
    expect(notices.messages.map((m) => m.subject)).to.include.members([`brokkr.notify.agent.${a.id}`, `brokkr.notify.agent.${b.id}`]);
    const created = await auditMessages(api.natsUrl, 'preview.created');
    expect(created.some((e) => (e.details as { preview_id?: string } | null)?.preview_id === res.body.id)).to.equal(true);
  });

  it('hands the YAML to each targeted agent until it reports, once; aggregates the verdicts', async () => {
    const a = await agent();
    const b = await agent();
    const created = await api.admin.post(`/stacks/${stackId}/previews`, undefined, { raw: YAML, contentType: 'application/yaml' });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.id as string;

    const pending = await a.client.get(`/agents/${a.id}/previews/pending`);
    expect(pending.status, pending.text).to.equal(200);
    const mine = (pending.body as { id: string; yaml_content: string; stack_id: string }[]).find((p) => p.id === id);
    expect(mine).to.include({ yaml_content: YAML, stack_id: stackId });

    const first = await a.client.post(`/previews/${id}/results`, RESULT);
    expect(first.status, first.text).to.equal(201);
    expect(first.body).to.deep.equal({ status: 'changes' });
    const again = await a.client.post(`/previews/${id}/results`, { objects: [] });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('preview_already_reported');
    const after = await a.client.get(`/agents/${a.id}/previews/pending`);
    expect((after.body as { id: string }[]).map((p) => p.id)).not.to.include(id);

    const bad = { objects: [{ ...RESULT.objects[0], action: null, diff: [], error: 'admission webhook denied the request' }] };
    expect((await b.client.post(`/previews/${id}/results`, bad)).body).to.deep.equal({ status: 'error' });

    const view = await api.admin.get(`/previews/${id}`);
    expect(view.status, view.text).to.equal(200);
    expect(view.body.status).to.equal('completed');
    expect(view.body.counts).to.include({ agents: 2, changes: 1, error: 1, pending: 0 });
    const byAgent = new Map((view.body.agents as { agent_id: string; status: string; objects: unknown[] }[]).map((x) => [x.agent_id, x]));
    expect(byAgent.get(a.id)).to.include({ status: 'changes' });
    expect(byAgent.get(a.id)!.objects[0]).to.deep.include({ name: 'preview', action: 'changed', diff: RESULT.objects[0]!.diff });
    expect(byAgent.get(b.id)).to.include({ status: 'error' });

    // preview.created when proposed, preview.completed once, after the last report.
    await eventually(async () => (await previewEvents(id)).some((e) => e.event_type === 'preview.completed'));
    const events = await previewEvents(id);
    expect(events.map((e) => e.event_type)).to.deep.equal(['preview.created', 'preview.completed']);
    expect(events[0]!.data).to.deep.include({ stack_id: stackId });
    expect(events[0]!.data.agents).to.have.members([a.id, b.id]);
    expect(events[1]!.data.counts).to.deep.include({ agents: 2, changes: 1, error: 1, pending: 0 });

    const list = await api.admin.get(`/stacks/${stackId}/previews`);
    expect(list.status).to.equal(200);
    expect((list.body as { id: string }[])[0]).to.include({ id, status: 'completed' });
  });

  it('an unchanged result is clean; a held long-poll answers when a preview is created', async () => {
    const a = await agent();
    // A new agent: nothing is pending, so the request is held.
    const held = a.client.get(`/agents/${a.id}/previews/pending`, { query: { wait: 20 } });
    await new Promise((r) => setTimeout(r, 300));
    const created = await api.admin.post(`/stacks/${stackId}/previews`, { yaml_content: YAML });
    const answer = await held;
    expect(answer.status).to.equal(200);
    expect((answer.body as { id: string }[]).map((p) => p.id)).to.include(created.body.id);
    const clean = { objects: [{ ...RESULT.objects[0], action: 'unchanged', diff: [] }] };
    expect((await a.client.post(`/previews/${created.body.id}/results`, clean)).body).to.deep.equal({ status: 'clean' });
  });

  it('only the stack owner or an admin proposes and reads; only a targeted agent reports', async () => {
    const a = await agent();
    const outsider = await insertAgentRow(api.sql, { status: 'ACTIVE' });
    const other = await createGenerator(api.admin);
    const owner = await createGenerator(api.admin);
    const ownStack = await createStack(owner.client, { generator_id: owner.generator.id });

    expect((await other.client.post(`/stacks/${stackId}/previews`, { yaml_content: YAML })).status).to.equal(403);
    expect((await a.client.post(`/stacks/${stackId}/previews`, { yaml_content: YAML })).status).to.equal(403);
    const mine = await owner.client.post(`/stacks/${ownStack.id}/previews`, { yaml_content: YAML });
    expect(mine.status, mine.text).to.equal(201);
    expect(mine.body.created_by).to.equal(`generator:${owner.generator.id}`);
    expect((await owner.client.get(`/previews/${mine.body.id}`)).status).to.equal(200);
    expect((await other.client.get(`/previews/${mine.body.id}`)).status).to.equal(403);
    expect((await other.client.get(`/stacks/${ownStack.id}/previews`)).status).to.equal(403);

    const created = await api.admin.post(`/stacks/${stackId}/previews`, { yaml_content: YAML });
    const id = created.body.id as string;
    const stranger = api.admin.as(outsider.pak);
    const refused = await stranger.post(`/previews/${id}/results`, RESULT);
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('preview_not_targeted');
    expect((await api.admin.post(`/previews/${id}/results`, RESULT)).status).to.equal(403);
    expect((await stranger.get(`/agents/${a.id}/previews/pending`)).status).to.equal(403);
    expect((await a.client.get(`/previews/${id}`)).status).to.equal(403);
  });

  it('refuses bad input with clear 4xx codes and stores nothing', async () => {
    const before = await counts();
    const bad = [
      { body: { yaml_content: 'a: [unclosed' }, code: 'invalid_preview' },
      { body: { yaml_content: 42 }, code: 'invalid_preview' },
      { body: { nothing: true }, code: 'invalid_preview' },
    ];
    for (const { body, code } of bad) {
      const res = await api.admin.post(`/stacks/${stackId}/previews`, body);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.code).to.equal(code);
    }
    expect((await api.admin.post(`/stacks/00000000-0000-4000-8000-000000000000/previews`, { yaml_content: YAML })).status).to.equal(404);
    expect((await api.admin.get('/previews/00000000-0000-4000-8000-000000000000')).body.code).to.equal('preview_not_found');
    expect((await api.admin.get('/previews/not-a-uuid')).status).to.equal(400);
    expect(await counts()).to.deep.equal(before);

    const a = await agent();
    const created = await api.admin.post(`/stacks/${stackId}/previews`, { yaml_content: YAML });
    const id = created.body.id as string;
    for (const body of [{}, { objects: [{ kind: 'ConfigMap' }] }, { objects: [{ ...RESULT.objects[0], action: 'exploded' }] }]) {
      const res = await a.client.post(`/previews/${id}/results`, body);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('invalid_request_body');
    }
    const nul = await a.client.post(`/previews/${id}/results`, { objects: [{ ...RESULT.objects[0], error: 'bad\u0000byte' }] });
    expect(nul.status, nul.text).to.equal(400);
    expect(nul.body.code).to.equal('invalid_preview_result');
    const still = await a.client.get(`/agents/${a.id}/previews/pending`);
    expect((still.body as { id: string }[]).map((p) => p.id)).to.include(id);
  });
});
