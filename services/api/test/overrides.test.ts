import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  createAgent,
  createGenerator,
  createStack,
  readStream,
  startTestApi,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * Override layers (docs/renders.md): per-agent patches of a stack's YAML, with agent references
 * that must resolve for every targeted agent, rendered before anything is stored. Plain YAML needs
 * no renderer binary, so these run on any api. Black-box, through HTTP.
 */
describe('api override layers', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  interface Agent {
    id: string;
    name: string;
    client: ApiClient;
  }
  interface Tenant {
    id: string;
    client: ApiClient;
    stack: string;
  }

  const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n';
  const regionPatch = (reference: string) => ({
    target: { kind: 'ConfigMap', name: 'cfg' },
    merge_patch: { data: { region: reference } },
  });

  async function tenant(): Promise<Tenant> {
    const { generator, client } = await createGenerator(api.admin);
    const stack = await createStack(client, { generator_id: generator.id });
    return { id: generator.id, client, stack: stack.id };
  }

  async function agentOf(t: Tenant, annotations: Record<string, string> = {}, labels: string[] = [], tenants = [t.id]): Promise<Agent> {
    const { agent, client } = await createAgent(api.admin);
    for (const g of tenants) expect((await api.admin.post(`/generators/${g}/register`, { agent_id: agent.id })).status).to.equal(201);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const [key, value] of Object.entries(annotations)) {
      expect((await api.admin.post(`/agents/${agent.id}/annotations`, { agent_id: agent.id, key, value })).status).to.equal(201);
    }
    for (const label of labels)
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    const res = await t.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: t.stack });
    expect(res.status, res.text).to.equal(201);
    return { id: agent.id, name: agent.name, client };
  }

  const postObject = async (t: Tenant, yaml = CM) => {
    const res = await t.client.post<{ id: string; yaml_checksum: string }>(`/stacks/${t.stack}/deployment-objects`, { yaml_content: yaml });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };

  /** The ConfigMap's data as the agent is served it, or undefined when the stack is not in its target state. */
  async function servedData(agent: Agent): Promise<Record<string, string> | undefined> {
    const res = await agent.client.get<{ yaml_content: string }[]>(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    const object = res.body[0];
    if (!object) return undefined;
    const [doc] = parseAllDocuments(object.yaml_content);
    return (doc!.toJS() as { data: Record<string, string> }).data;
  }

  const expectError = (res: ApiResponse, status: number, code: string) =>
    expect([res.status, res.body?.code], res.text).to.deep.equal([status, code]);

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('refuses a layer that some targeted agent cannot resolve, naming that agent, and changes nothing', async () => {
    const t = await tenant();
    const eu = await agentOf(t, { region: 'eu-west' });
    const bare = await agentOf(t);
    await postObject(t);
    const res = await t.client.post(`/stacks/${t.stack}/overrides`, {
      name: 'region',
      patches: [regionPatch('{{ agent.annotations.region }}')],
    });
    expectError(res, 422, 'render_failed');
    const failures = (res.body.details as { failures: { agent_id: string; reason: string }[] }).failures;
    expect(failures.map((f) => f.agent_id)).to.deep.equal([bare.id]);
    expect(failures[0]!.reason).to.contain('annotations.region');
    expect((await t.client.get(`/stacks/${t.stack}/overrides`)).body).to.deep.equal([]);
    expect(await servedData(eu)).to.deep.equal({ a: '1' });
    expect(await servedData(bare)).to.deep.equal({ a: '1' });
  });

  it("gives each agent its own render: the annotation's value, or the default; removing the layer serves the stored YAML again", async () => {
    const t = await tenant();
    const eu = await agentOf(t, { region: 'eu-west' });
    const bare = await agentOf(t);
    const object = await postObject(t);
    const res = await t.client.post(`/stacks/${t.stack}/overrides`, {
      name: 'region',
      patches: [regionPatch('{{ agent.annotations.region | default: "us-east" }}-{{ agent.name }}')],
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.deep.include({ name: 'region', priority: 0, selector: {}, values: null, stack_id: t.stack });
    expect(await servedData(eu)).to.deep.equal({ a: '1', region: `eu-west-${eu.name}` });
    expect(await servedData(bare)).to.deep.equal({ a: '1', region: `us-east-${bare.name}` });

    // A new object of the stack is rendered for each agent with the layers as they are.
    await postObject(t, CM.replace('"1"', '"2"'));
    expect(await servedData(eu)).to.deep.equal({ a: '2', region: `eu-west-${eu.name}` });

    expect((await t.client.delete(`/stacks/${t.stack}/overrides/region`)).status).to.equal(204);
    expect(await servedData(eu)).to.deep.equal({ a: '2' });
    expect(object.yaml_checksum).to.be.a('string');
  });

  it('applies only the layers whose selector picks the agent, lowest priority first (the last one wins)', async () => {
    const t = await tenant();
    const prod = await agentOf(t, { env: 'prod' }, ['gpu']);
    const other = await agentOf(t, { env: 'dev' });
    await postObject(t);
    const layer = async (name: string, priority: number, selector: unknown, value: string) => {
      const res = await t.client.post(`/stacks/${t.stack}/overrides`, { name, priority, selector, patches: [regionPatch(value)] });
      expect(res.status, res.text).to.equal(201);
    };
    await layer('high', 10, { labels: ['gpu'] }, 'from-high');
    await layer('low', 1, { annotations: { env: 'prod' } }, 'from-low');
    expect(await servedData(prod)).to.deep.equal({ a: '1', region: 'from-high' });
    expect(await servedData(other)).to.deep.equal({ a: '1' });
    const names = ((await t.client.get<{ name: string }[]>(`/stacks/${t.stack}/overrides`)).body ?? []).map((l) => l.name);
    expect(names).to.deep.equal(['low', 'high']);
  });

  it('refuses a reference no agent could have (422 invalid_override), a patch whose target is not rendered (422 render_failed) and a taken name (409)', async () => {
    const t = await tenant();
    await agentOf(t);
    await postObject(t);
    expectError(
      await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'typo', patches: [regionPatch('{{ agent.nmae }}')] }),
      422,
      'invalid_override',
    );
    const missing = { target: { kind: 'ConfigMap', name: 'nope' }, merge_patch: { data: { b: '2' } } };
    expectError(await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'missing', patches: [missing] }), 422, 'render_failed');
    expect((await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'ok', patches: [regionPatch('x')] })).status).to.equal(201);
    expectError(await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'ok', patches: [regionPatch('y')] }), 409, 'override_exists');
    expectError(await t.client.put(`/stacks/${t.stack}/overrides/none`, { patches: [regionPatch('y')] }), 404, 'override_not_found');
  });

  it("lets only the admin and the stack's generator read or change its layers", async () => {
    const t = await tenant();
    const agent = await agentOf(t);
    const stranger = await tenant();
    expectError(await stranger.client.get(`/stacks/${t.stack}/overrides`), 403, 'stack_not_owned');
    expectError(await stranger.client.post(`/stacks/${t.stack}/overrides`, { name: 'x' }), 403, 'stack_not_owned');
    expectError(await agent.client.get(`/stacks/${t.stack}/overrides`), 403, 'stack_not_owned');
    expect((await api.admin.post(`/stacks/${t.stack}/overrides`, { name: 'x' })).status).to.equal(201);
  });

  it("refuses a layer whose patch moves an object where a confined agent's grant does not reach (422 grant_refused)", async () => {
    const t = await tenant();
    const other = await tenant();
    const agent = await agentOf(t, {}, [], [t.id, other.id]);
    await postObject(t);
    const move = { target: { kind: 'ConfigMap', name: 'cfg' }, merge_patch: { metadata: { namespace: 'kube-system' } } };
    expectError(await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'move', patches: [move] }), 422, 'grant_refused');
    expect(await servedData(agent)).to.have.property('a', '1');
  });

  it('renders an agent targeted after the object was stored, and again when its annotations change', async () => {
    const t = await tenant();
    await agentOf(t, { region: 'eu-west' });
    await postObject(t);
    const layer = { name: 'region', patches: [regionPatch('{{ agent.annotations.region | default: "none" }}')] };
    expect((await t.client.post(`/stacks/${t.stack}/overrides`, layer)).status).to.equal(201);
    const later = await agentOf(t, { region: 'ap-south' });
    expect(await eventually(() => servedData(later))).to.deep.equal({ a: '1', region: 'ap-south' });

    await api.admin.delete(`/agents/${later.id}/annotations/region`);
    await eventually(async () => (await servedData(later))?.region === 'none');
  });

  it('serves an agent targeted later that cannot be rendered nothing of the stack, and says so (deployment.render_failed)', async () => {
    const t = await tenant();
    await agentOf(t, { region: 'eu-west' });
    const object = await postObject(t);
    expect(
      (await t.client.post(`/stacks/${t.stack}/overrides`, { name: 'region', patches: [regionPatch('{{ agent.annotations.region }}')] }))
        .status,
    ).to.equal(201);
    const later = await agentOf(t);
    const event = await eventually(async () => {
      const all = await readStream<{ event_type: string; data: Record<string, unknown> }>(api.natsUrl, 'BROKKR_EVENTS');
      return all.find((m) => m.data.event_type === 'deployment.render_failed' && m.data.data.agent_id === later.id);
    });
    expect(event.data.data).to.deep.include({ deployment_object_id: object.id, stack_id: t.stack });
    expect(event.data.data.reason).to.contain('annotations.region');
    expect(await servedData(later)).to.equal(undefined);
  });

  it('reads what an agent reports about its cluster ({{ agent.facts.kubernetes_version }}), and a heartbeat whose facts do not parse still counts', async () => {
    const t = await tenant();
    const agent = await agentOf(t);
    const facts = { kubernetes_version: 'v1.33.13', api_versions: ['apps/v1', 'v1'] };
    expect((await agent.client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, facts })).status).to.equal(204);
    const hostile = { kubernetes_version: 'v1; DROP TABLE agents', api_versions: 'all' };
    expect((await agent.client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: true, facts: hostile })).status).to.equal(204);
    await postObject(t);
    const layer = { name: 'version', patches: [regionPatch('k8s-{{ agent.facts.kubernetes_version }}')] };
    expect((await t.client.post(`/stacks/${t.stack}/overrides`, layer)).status).to.equal(201);
    expect(await servedData(agent)).to.deep.equal({ a: '1', region: 'k8s-v1.33.13' });
  });

  it("explains an agent's render: what it is served, the layers that applied, and which layer set each field", async () => {
    const t = await tenant();
    const agent = await agentOf(t, { region: 'eu-west' });
    const elsewhere = await tenant();
    const object = await postObject(t);
    const post = async (name: string, priority: number, patches: unknown[]) =>
      expect((await t.client.post(`/stacks/${t.stack}/overrides`, { name, priority, patches })).status).to.equal(201);
    await post('region', 1, [regionPatch('{{ agent.annotations.region }}')]);
    await post('labels', 2, [
      { target: { kind: 'ConfigMap', name: 'cfg' }, json_patch: [{ op: 'add', path: '/metadata/labels', value: { tier: 'web' } }] },
    ]);
    const res = await t.client.get<Record<string, unknown>>(`/stacks/${t.stack}/agents/${agent.id}/render`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({
      stack_id: t.stack,
      agent_id: agent.id,
      deployment_object_id: object.id,
      per_agent: true,
      error: null,
    });
    expect(res.body.yaml_content).to.contain('region: eu-west').and.to.contain('tier: web');
    expect((res.body.inputs as { layers: unknown }).layers).to.deep.equal([
      { name: 'region', priority: 1 },
      { name: 'labels', priority: 2 },
    ]);
    expect(res.body.fields).to.deep.equal([
      { in: 'object', path: '/data/region', layer: 'region', target: "ConfigMap 'cfg'", by: 'merge_patch' },
      { in: 'object', path: '/metadata/labels', layer: 'labels', target: "ConfigMap 'cfg'", by: 'add' },
    ]);
    const stranger = await agentOf(elsewhere);
    expect((await t.client.get(`/stacks/${t.stack}/agents/${stranger.id}/render`)).body.code).to.equal('agent_not_reached');
    expect((await elsewhere.client.get(`/stacks/${t.stack}/agents/${agent.id}/render`)).status).to.equal(403);
  });
});
