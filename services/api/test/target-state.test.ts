import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createAgent, createGenerator, createStack, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

/** GET /agents/{id}/target-state (Brokkr's, with the changes docs/compatibility.md lists), black-box. */

interface DeploymentObject {
  id: string;
  sequence_id: number;
  stack_id: string;
  yaml_content: string;
  yaml_checksum: string;
  is_deletion_marker: boolean;
}

const DO_FIELDS = [
  'id',
  'created_at',
  'updated_at',
  'deleted_at',
  'sequence_id',
  'stack_id',
  'yaml_content',
  'yaml_checksum',
  'submitted_at',
  'is_deletion_marker',
];

describe('api target state', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let gen: { id: string; client: ApiClient };

  interface TestAgent {
    id: string;
    client: ApiClient;
  }

  /** An ACTIVE agent registered with the test generator (unless `registered: false`). */
  async function activeAgent(opts: { registered?: boolean; labels?: string[]; annotations?: [string, string][] } = {}): Promise<TestAgent> {
    const { agent, client } = await createAgent(api.admin, { generator_ids: opts.registered === false ? [] : [gen.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const label of opts.labels ?? []) {
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    }
    for (const [key, value] of opts.annotations ?? []) {
      expect((await api.admin.post(`/agents/${agent.id}/annotations`, { agent_id: agent.id, key, value })).status).to.equal(201);
    }
    return { id: agent.id, client };
  }

  async function stack(opts: { labels?: string[]; annotations?: [string, string][] } = {}): Promise<string> {
    const { id } = await createStack(gen.client, { generator_id: gen.id });
    for (const label of opts.labels ?? []) expect((await gen.client.post(`/stacks/${id}/labels`, label)).status).to.equal(201);
    for (const [key, value] of opts.annotations ?? []) {
      expect((await gen.client.post(`/stacks/${id}/annotations`, { stack_id: id, key, value })).status).to.equal(201);
    }
    return id;
  }

  async function publish(stackId: string, yaml = `kind: ConfigMap\nmetadata:\n  name: cm-${Math.random()}\n`): Promise<DeploymentObject> {
    const res = await gen.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  async function state(agent: TestAgent, mode?: string): Promise<DeploymentObject[]> {
    const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode } });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  const ids = (objects: DeploymentObject[]) => objects.map((o) => o.id);

  async function report(agent: TestAgent, objectId: string, status: string): Promise<void> {
    const res = await agent.client.post(`/agents/${agent.id}/events`, {
      agent_id: agent.id,
      deployment_object_id: objectId,
      event_type: 'DEPLOY',
      status,
    });
    expect(res.status, res.text).to.equal(201);
  }

  before(async () => {
    api = await startTestApi(infra);
    const created = await createGenerator(api.admin);
    gen = { id: created.generator.id, client: created.client };
  });

  after(async () => {
    await api?.stop();
  });

  it('serves stacks matched by a label, newest first, as full DeploymentObjects', async () => {
    const agent = await activeAgent({ labels: ['ts-label'] });
    const first = await publish(await stack({ labels: ['ts-label', 'other'] }));
    const second = await publish(await stack({ labels: ['ts-label'] }));
    await publish(await stack({ labels: ['unrelated'] }));
    const objects = await state(agent);
    expect(ids(objects)).to.deep.equal([second.id, first.id]);
    expect(objects[0]).to.have.all.keys(...DO_FIELDS);
    expect(objects[0]).to.deep.include({ ...second });
  });

  it('serves stacks matched by an annotation pair (key and value must both match)', async () => {
    const agent = await activeAgent({ annotations: [['tier', 'gold']] });
    const match = await publish(await stack({ annotations: [['tier', 'gold']] }));
    await publish(await stack({ annotations: [['tier', 'silver']] }));
    expect(ids(await state(agent))).to.deep.equal([match.id]);
  });

  it('serves explicitly targeted stacks', async () => {
    const agent = await activeAgent();
    const stackId = await stack();
    const object = await publish(stackId);
    expect(await state(agent)).to.deep.equal([]);
    expect((await gen.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stackId })).status).to.equal(201);
    expect(ids(await state(agent))).to.deep.equal([object.id]);
    expect((await api.admin.get(`/agents/${agent.id}/stacks`)).body.map((s: { id: string }) => s.id)).to.deep.equal([stackId]);
  });

  it('ignores label and annotation matches of generators the agent is not registered with', async () => {
    const agent = await activeAgent({ registered: false, labels: ['consent'], annotations: [['consent', 'yes']] });
    const object = await publish(await stack({ labels: ['consent'], annotations: [['consent', 'yes']] }));
    expect(await state(agent)).to.deep.equal([]);
    expect((await api.admin.get(`/agents/${agent.id}/stacks`)).body).to.deep.equal([]);
    const register = await api.admin.post(`/generators/${gen.id}/register`, { agent_id: agent.id });
    expect(register.status, register.text).to.equal(201);
    expect(ids(await state(agent))).to.deep.equal([object.id]);
  });

  it('serves only the latest object of each stack', async () => {
    const agent = await activeAgent({ labels: ['latest'] });
    const stackId = await stack({ labels: ['latest'] });
    await publish(stackId);
    await publish(stackId);
    const latest = await publish(stackId);
    expect(ids(await state(agent))).to.deep.equal([latest.id]);
  });

  it('drops successfully applied objects in incremental mode, keeps them with mode=full', async () => {
    const agent = await activeAgent({ labels: ['incr'] });
    const a = await publish(await stack({ labels: ['incr'] }));
    const b = await publish(await stack({ labels: ['incr'] }));
    await report(agent, a.id, 'SUCCESS');
    expect(ids(await state(agent))).to.deep.equal([b.id]);
    expect(ids(await state(agent, 'incremental'))).to.deep.equal([b.id]);
    expect(ids(await state(agent, 'full'))).to.deep.equal([b.id, a.id]);
  });

  it('serves an object again after a FAILURE (so the agent retries it)', async () => {
    const agent = await activeAgent({ labels: ['retry'] });
    const object = await publish(await stack({ labels: ['retry'] }));
    await report(agent, object.id, 'FAILURE');
    expect(ids(await state(agent))).to.deep.equal([object.id]);
    await report(agent, object.id, 'SUCCESS');
    expect(await state(agent)).to.deep.equal([]);
  });

  it("serves a deleted stack's deletion marker, in both modes, until the agent reports on it", async () => {
    const agent = await activeAgent({ labels: ['bye'] });
    const stackId = await stack({ labels: ['bye'] });
    const object = await publish(stackId);
    await report(agent, object.id, 'SUCCESS');
    expect((await gen.client.delete(`/stacks/${stackId}`)).status).to.equal(204);

    const [marker, ...rest] = await state(agent);
    expect(rest).to.deep.equal([]);
    expect(marker).to.include({ stack_id: stackId, is_deletion_marker: true, yaml_content: '' });
    expect(marker!.sequence_id).to.be.greaterThan(object.sequence_id);
    expect(ids(await state(agent, 'full'))).to.deep.equal([marker!.id]);
    expect((await api.admin.get(`/agents/${agent.id}/stacks`)).body).to.deep.equal([]);

    await report(agent, marker!.id, 'FAILURE');
    expect(await state(agent)).to.deep.equal([]);
    expect(await state(agent, 'full')).to.deep.equal([]);
  });

  it('gives an inactive agent an empty state, and the full state once it is activated', async () => {
    const agent = await activeAgent({ labels: ['sleepy'] });
    const object = await publish(await stack({ labels: ['sleepy'] }));
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'INACTIVE' })).status).to.equal(200);
    expect(await state(agent)).to.deep.equal([]);
    expect(await state(agent, 'full')).to.deep.equal([]);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    expect(ids(await state(agent))).to.deep.equal([object.id]);
  });

  it('answers any agent id the admin asks about (an unknown one has an empty state)', async () => {
    const res = await api.admin.get(`/agents/${crypto.randomUUID()}/target-state`);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal([]);
  });

  describe('ETag and conditional requests', () => {
    it('always answers 200 without If-None-Match, with an ETag that follows the content and the mode', async () => {
      const agent = await activeAgent({ labels: ['etag'] });
      await publish(await stack({ labels: ['etag'] }));
      const a = await agent.client.get(`/agents/${agent.id}/target-state`);
      const b = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { wait: 5 } });
      const full = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
      expect([a.status, b.status, full.status]).to.deep.equal([200, 200, 200]);
      expect(a.headers.get('etag')).to.match(/^"ts-[A-Za-z0-9_-]+"$/);
      expect(b.headers.get('etag')).to.equal(a.headers.get('etag'));
      expect(full.headers.get('etag')).to.not.equal(a.headers.get('etag'));
    });

    it('answers 304 for a matching If-None-Match (at once, or after wait=1 when nothing changed)', async () => {
      const agent = await activeAgent({ labels: ['etag304'] });
      await publish(await stack({ labels: ['etag304'] }));
      const first = await agent.client.get(`/agents/${agent.id}/target-state`);
      const etag = first.headers.get('etag')!;
      const now = await agent.client.get(`/agents/${agent.id}/target-state`, { headers: { 'if-none-match': etag } });
      expect(now.status).to.equal(304);
      expect(now.text).to.equal('');
      expect(now.headers.get('etag')).to.equal(etag);
      const waited = await agent.client.get(`/agents/${agent.id}/target-state`, {
        query: { wait: 1 },
        headers: { 'if-none-match': `W/${etag}, "x"` },
      });
      expect(waited.status).to.equal(304);
      expect(waited.text).to.equal('');
    });

    it('answers 200 at once when If-None-Match names an older state', async () => {
      const agent = await activeAgent({ labels: ['etag-old'] });
      const stackId = await stack({ labels: ['etag-old'] });
      await publish(stackId);
      const etag = (await agent.client.get(`/agents/${agent.id}/target-state`)).headers.get('etag')!;
      const newer = await publish(stackId);
      const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { wait: 30 }, headers: { 'if-none-match': etag } });
      expect(res.status).to.equal(200);
      expect(ids(res.body)).to.deep.equal([newer.id]);
      expect(res.headers.get('etag')).to.not.equal(etag);
    });

    it('rejects a malformed wait with 400 invalid_query', async () => {
      const agent = await activeAgent();
      for (const wait of ['-1', 'abc', '1.5']) {
        const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { wait } });
        expect(res.status, wait).to.equal(400);
        expect(res.body.code).to.equal('invalid_query');
      }
    });
  });
});
