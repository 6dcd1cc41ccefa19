import { expect } from 'chai';
import type { AgentGrants } from '@brokkr/contracts';
import { defaultNamespaceOf, grantsDigest } from '@brokkr/grants';
import { useTestInfra } from '@brokkr/testkit';
import { createAgent, createGenerator, createStack, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

/**
 * Grants (docs/security.md, "Tenants confined in shared clusters"): what each generator may place
 * on an agent's cluster, set by the cluster's side, visible to both, served to the agent in step
 * with its target state, and checked when an object is submitted. Black-box, through HTTP.
 */
describe('api grants', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  interface Tenant {
    id: string;
    name: string;
    client: ApiClient;
    stack: string;
  }

  async function tenant(): Promise<Tenant> {
    const { generator, client } = await createGenerator(api.admin);
    const stack = await createStack(client, { generator_id: generator.id });
    return { id: generator.id, name: generator.name, client, stack: stack.id };
  }

  async function activeAgent(): Promise<{ id: string; name: string; client: ApiClient }> {
    const { agent, client } = await createAgent(api.admin);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    return { id: agent.id, name: agent.name, client };
  }

  async function register(agentId: string, generatorId: string, grant?: unknown): Promise<void> {
    const res = await api.admin.post(`/generators/${generatorId}/register`, { agent_id: agentId, ...(grant ? { grant } : {}) });
    expect(res.status, res.text).to.equal(201);
  }

  async function target(t: Tenant, agentId: string): Promise<void> {
    const res = await t.client.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: t.stack });
    expect(res.status, res.text).to.equal(201);
  }

  const grantsOf = async (client: ApiClient, agentId: string) => {
    const res = await client.get<AgentGrants>(`/agents/${agentId}/grants`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const inEffect = (grants: AgentGrants, generatorId: string) => grants.generators.find((g) => g.generator_id === generatorId);
  const post = (t: Tenant, yaml: string) => t.client.post(`/stacks/${t.stack}/deployment-objects`, { yaml_content: yaml });
  const cm = (namespace: string | undefined, name = 'cfg') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}data:\n  a: "1"\n`;

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('gives a lone tenant the whole cluster, and confines both once a second one is registered (the restricted column agrees)', async () => {
    const a = await tenant();
    const b = await tenant();
    const agent = await activeAgent();
    await register(agent.id, a.id);
    let grants = await grantsOf(agent.client, agent.id);
    expect(grants.tenants).to.equal(1);
    expect(inEffect(grants, a.id)).to.deep.include({ whole_cluster_in_effect: true, generator_name: a.name });
    expect(inEffect(grants, a.id)!.grant).to.deep.include({
      default_namespace: defaultNamespaceOf(a.id),
      whole_cluster: true,
      cluster_scoped: false,
      adoption: false,
    });
    // The system generator (the admin's fleet stacks) is no tenant and always reaches the whole cluster.
    expect(grants.generators.filter((g) => g.is_system).map((g) => g.whole_cluster_in_effect)).to.deep.equal([true]);

    await register(agent.id, b.id);
    grants = await grantsOf(api.admin, agent.id);
    expect(grants.tenants).to.equal(2);
    expect(inEffect(grants, a.id)!.whole_cluster_in_effect).to.equal(false);
    expect(inEffect(grants, b.id)!.whole_cluster_in_effect).to.equal(false);
    const { rows } = await api.sql.query<{ generator_id: string; restricted: boolean }>(
      'SELECT generator_id, restricted FROM agent_generator_registrations WHERE agent_id = $1',
      [agent.id],
    );
    for (const row of rows) expect(row.restricted, row.generator_id).to.equal(!inEffect(grants, row.generator_id)!.whole_cluster_in_effect);

    // A deleted generator is nobody's tenant: the other one has the whole cluster again.
    expect((await api.admin.delete(`/generators/${b.id}`)).status).to.equal(204);
    grants = await grantsOf(agent.client, agent.id);
    expect(grants.tenants).to.equal(1);
    expect(inEffect(grants, a.id)!.whole_cluster_in_effect).to.equal(true);
  });

  it("keeps the grant the agent asked for, shows it and the agent's name as asked, and voids the request when the agent is renamed", async () => {
    const t = await tenant();
    const agent = await activeAgent();
    const grant = { namespaces: ['team-*'], whole_cluster: false };
    const asked = await agent.client.post(`/generators/${t.id}/register`, { grant });
    expect(asked.status, asked.text).to.equal(201);
    expect(asked.body.grant).to.deep.include({ namespaces: ['team-*'], whole_cluster: false, default_namespace: defaultNamespaceOf(t.id) });

    const pending = await t.client.get<{ agent_name: string; grant: { namespaces: string[] } }[]>(
      `/generators/${t.id}/registration-requests`,
    );
    expect(pending.body).to.have.length(1);
    expect(pending.body[0]!.agent_name).to.equal(agent.name);
    expect(pending.body[0]!.grant.namespaces).to.deep.equal(['team-*']);

    // The agent renames itself while the request waits (posing as a trusted cluster): the request
    // was asked as someone else, so it is withdrawn.
    const renamed = await agent.client.get<Record<string, unknown>>(`/agents/${agent.id}`);
    expect((await agent.client.put(`/agents/${agent.id}`, { ...renamed.body, name: `${agent.name}-prod` })).status).to.equal(200);
    const stale = await t.client.post(`/generators/${t.id}/registration-requests/${agent.id}/approve`, {});
    expect(stale.status, stale.text).to.equal(409);
    expect(stale.body.code).to.equal('registration_request_stale');
    expect((await t.client.get(`/generators/${t.id}/registration-requests`)).body).to.deep.equal([]);
    expect((await grantsOf(agent.client, agent.id)).generators.some((g) => g.generator_id === t.id)).to.equal(false);

    // Asked again under its new name, and approved: the registration carries the grant asked for.
    expect((await agent.client.post(`/generators/${t.id}/register`, { grant })).status).to.equal(201);
    const approved = await t.client.post(`/generators/${t.id}/registration-requests/${agent.id}/approve`, {});
    expect(approved.status, approved.text).to.equal(201);
    expect(approved.body.grant).to.deep.include({ namespaces: ['team-*'], whole_cluster: false });
    const seen = await t.client.get<{ agent_id: string; grant: { namespaces: string[] } }[]>(`/generators/${t.id}/registered-agents`);
    expect(seen.body.find((r) => r.agent_id === agent.id)!.grant.namespaces).to.deep.equal(['team-*']);
    expect(inEffect(await grantsOf(agent.client, agent.id), t.id)!.whole_cluster_in_effect).to.equal(false);
  });

  it('lets only an admin change a grant, and refuses a malformed one', async () => {
    const t = await tenant();
    const agent = await activeAgent();
    await register(agent.id, t.id);
    const path = `/generators/${t.id}/registered-agents/${agent.id}/grant`;
    expect((await t.client.put(path, { grant: { whole_cluster: true, cluster_scoped: true } })).status).to.equal(403);
    expect((await agent.client.put(path, { grant: { cluster_scoped: true } })).status).to.equal(403);
    const bad = await api.admin.put(path, { grant: { namespaces: ['Not A Namespace'] } });
    expect(bad.status).to.equal(422);
    const unknown = await api.admin.put(path, { grant: { run_as_root: true } });
    expect(unknown.status).to.equal(422);
    const ok = await api.admin.put(path, { grant: { namespaces: ['shop'], whole_cluster: false } });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.grant).to.deep.include({ namespaces: ['shop'], whole_cluster: false });
    expect((await api.admin.put(`/generators/${t.id}/registered-agents/${t.id}/grant`, { grant: null })).status).to.equal(404);
  });

  it('serves the grants digest with the target state and changes the ETag when a grant changes', async () => {
    const t = await tenant();
    const agent = await activeAgent();
    await register(agent.id, t.id);
    await target(t, agent.id);
    expect((await post(t, cm('default'))).status).to.equal(201);
    const first = await agent.client.get(`/agents/${agent.id}/target-state`);
    const digest = first.headers.get('brokkr-grants');
    expect(digest).to.equal(grantsDigest(await grantsOf(agent.client, agent.id)));
    const path = `/generators/${t.id}/registered-agents/${agent.id}/grant`;
    expect((await api.admin.put(path, { grant: { whole_cluster: false } })).status).to.equal(200);
    const second = await agent.client.get(`/agents/${agent.id}/target-state`);
    expect(second.headers.get('brokkr-grants')).to.not.equal(digest);
    expect(second.headers.get('brokkr-grants')).to.equal(grantsDigest(await grantsOf(agent.client, agent.id)));
    expect(second.headers.get('etag')).to.not.equal(first.headers.get('etag'));
  });

  describe('submit: the api refuses what a targeted agent would refuse', () => {
    let a: Tenant;
    let b: Tenant;
    let shared: { id: string; name: string };
    let alone: { id: string; name: string };

    before(async () => {
      a = await tenant();
      b = await tenant();
      shared = await activeAgent();
      alone = await activeAgent();
      await register(shared.id, a.id, { namespaces: ['team-a', 'common'] });
      await register(shared.id, b.id, { namespaces: ['team-b', 'common'] });
      await register(alone.id, a.id);
      await target(a, shared.id);
      await target(a, alone.id);
    });

    it("refuses an object in another tenant's namespace with 422 grant_refused naming the agent and the object, and stores nothing", async () => {
      const before = (await a.client.get<unknown[]>(`/stacks/${a.stack}/deployment-objects`)).body.length;
      const res = await post(a, `${cm('team-a')}---\n${cm('team-b', 'steal')}`);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('grant_refused');
      expect(res.body.details.total).to.equal(1);
      expect(res.body.details.refusals[0]).to.deep.include({
        agent_id: shared.id,
        agent_name: shared.name,
        object: "ConfigMap 'team-b/steal'",
      });
      expect(res.body.details.refusals[0].reason).to.match(/namespace outside what generator/);
      expect(res.body.message).to.contain(shared.name);
      expect((await a.client.get<unknown[]>(`/stacks/${a.stack}/deployment-objects`)).body.length).to.equal(before);
    });

    it('refuses cluster-scoped kinds and a quota in a namespace another tenant is granted too; accepts what every agent accepts', async () => {
      const quota =
        'apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: zero-pods\n  namespace: common\nspec:\n  hard:\n    pods: "0"\n';
      const denied = await post(a, quota);
      expect(denied.status, denied.text).to.equal(422);
      expect(denied.body.details.refusals[0].reason).to.match(/granted too/);
      const role =
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: mine\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects: []\n';
      expect((await post(a, role)).status).to.equal(422);
      // No namespace: its generator's own, which the grant always covers.
      const ok = await post(a, `${cm('team-a')}---\n${cm(undefined, 'defaulted')}---\n${cm('common', 'shared-config')}`);
      expect(ok.status, ok.text).to.equal(201);
      const marker = await a.client.post(`/stacks/${a.stack}/deployment-objects`, { yaml_content: cm('team-b'), is_deletion_marker: true });
      expect(marker.status, marker.text).to.equal(201);
    });
  });
});
