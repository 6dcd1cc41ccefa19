import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { auditMessages, createAgent, createGenerator, createStack, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

/**
 * Registration is two-sided consent (docs/security.md): an agent that registers itself with a
 * generator only asks, and receives none of that generator's stacks until the generator or an
 * admin approves; an admin's registration is in effect at once. Black-box, through HTTP.
 */
describe('api registration consent', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  interface Tenant {
    id: string;
    client: ApiClient;
  }

  /** A generator with one labelled stack holding one object (a Secret: what a tenant must not leak). */
  async function tenantWithSecret(label: string): Promise<Tenant & { objectId: string }> {
    const { generator, client } = await createGenerator(api.admin);
    const stack = await createStack(client, { generator_id: generator.id });
    expect((await client.post(`/stacks/${stack.id}/labels`, label)).status).to.equal(201);
    const object = await client.post<{ id: string }>(`/stacks/${stack.id}/deployment-objects`, {
      yaml_content: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${label}\nstringData:\n  password: hunter2\n`,
    });
    expect(object.status, object.text).to.equal(201);
    return { id: generator.id, client, objectId: object.body.id };
  }

  /** An ACTIVE agent carrying `label`, registered with no tenant generator. */
  async function activeAgent(label: string): Promise<Tenant> {
    const { agent, client } = await createAgent(api.admin);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    return { id: agent.id, client };
  }

  async function served(agent: Tenant): Promise<string[]> {
    const res = await agent.client.get<{ id: string }[]>(`/agents/${agent.id}/target-state`);
    expect(res.status, res.text).to.equal(200);
    return res.body.map((o) => o.id);
  }

  async function stacksOf(agent: Tenant): Promise<unknown[]> {
    const res = await agent.client.get<unknown[]>(`/agents/${agent.id}/stacks`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it("gives a self-registered agent none of the generator's stacks until the generator approves, then gives them", async () => {
    const tenant = await tenantWithSecret('consent-a');
    const agent = await activeAgent('consent-a');

    const asked = await agent.client.post(`/generators/${tenant.id}/register`, {});
    expect(asked.status, asked.text).to.equal(201);
    expect(asked.body).to.include({ agent_id: agent.id, generator_id: tenant.id, status: 'pending' });
    expect(await served(agent)).to.deep.equal([]);
    expect(await stacksOf(agent)).to.deep.equal([]);
    // Brokkr's agent asks again at every start and counts 409 as success.
    const again = await agent.client.post(`/generators/${tenant.id}/register`, {});
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('registration_pending');
    expect(await served(agent)).to.deep.equal([]);

    const pending = await tenant.client.get<{ agent_id: string; agent_name: string }[]>(`/generators/${tenant.id}/registration-requests`);
    expect(pending.status).to.equal(200);
    expect(pending.body.map((r) => r.agent_id)).to.deep.equal([agent.id]);
    expect((await tenant.client.get(`/generators/${tenant.id}/registered-agents`)).body).to.deep.equal([]);

    const etag = (await agent.client.get(`/agents/${agent.id}/target-state`)).headers.get('etag')!;
    const held = agent.client.get<{ id: string }[]>(`/agents/${agent.id}/target-state`, {
      query: { wait: 30 },
      headers: { 'if-none-match': etag },
    });
    const approved = await tenant.client.post(`/generators/${tenant.id}/registration-requests/${agent.id}/approve`);
    expect(approved.status, approved.text).to.equal(201);
    expect(approved.body).to.include({ agent_id: agent.id, generator_id: tenant.id });
    // The approval wakes the agent's long-poll with the stacks it now receives.
    const woken = await held;
    expect(woken.status).to.equal(200);
    expect(woken.body.map((o) => o.id)).to.deep.equal([tenant.objectId]);
    expect(await served(agent)).to.deep.equal([tenant.objectId]);
    expect(await stacksOf(agent)).to.have.length(1);

    expect((await tenant.client.get(`/generators/${tenant.id}/registration-requests`)).body).to.deep.equal([]);
    const registered = await tenant.client.get<{ agent_id: string }[]>(`/generators/${tenant.id}/registered-agents`);
    expect(registered.body.map((r) => r.agent_id)).to.deep.equal([agent.id]);
    const third = await agent.client.post(`/generators/${tenant.id}/register`, {});
    expect(third.status).to.equal(409);
    expect(third.body.code).to.equal('already_registered');
    const entry = await eventually(async () =>
      (await auditMessages(api.natsUrl, 'agent.registered')).find((e) => e.resource_id === agent.id),
    );
    expect(entry).to.include({ actor_type: 'generator', actor_id: tenant.id });
  });

  it('lets a generator see and decide only its own requests; an agent cannot approve itself', async () => {
    const tenant = await tenantWithSecret('consent-b');
    const other = await tenantWithSecret('consent-b-other');
    const agent = await activeAgent('consent-b');
    expect((await agent.client.post(`/generators/${tenant.id}/register`, {})).status).to.equal(201);

    const approvePath = `/generators/${tenant.id}/registration-requests/${agent.id}/approve`;
    for (const [who, client, code] of [
      ['another generator', other.client, 'generator_not_owned'],
      ['the agent', agent.client, 'generator_not_owned'],
    ] as const) {
      const res = await client.post(approvePath);
      expect(res.status, who).to.equal(403);
      expect(res.body.code, who).to.equal(code);
      const list = await client.get(`/generators/${tenant.id}/registration-requests`);
      expect(list.status, who).to.equal(403);
      const decline = await client.delete(`/generators/${tenant.id}/registration-requests/${agent.id}`);
      expect(decline.status, who).to.equal(403);
    }
    // Approving in its own name gives the other generator nothing: there is no request to it.
    const own = await other.client.post(`/generators/${other.id}/registration-requests/${agent.id}/approve`);
    expect(own.status).to.equal(404);
    expect(own.body.code).to.equal('registration_request_not_found');
    expect(await served(agent)).to.deep.equal([]);

    // Declining drops the request; the agent may ask again.
    expect((await tenant.client.delete(`/generators/${tenant.id}/registration-requests/${agent.id}`)).status).to.equal(204);
    expect((await tenant.client.delete(`/generators/${tenant.id}/registration-requests/${agent.id}`)).status).to.equal(204);
    const gone = await tenant.client.post(approvePath);
    expect(gone.status).to.equal(404);
    expect(gone.body.code).to.equal('registration_request_not_found');
    expect(await served(agent)).to.deep.equal([]);
    expect((await agent.client.post(`/generators/${tenant.id}/register`, {})).body.status).to.equal('pending');

    // An agent that withdraws (deregisters) leaves nothing to approve.
    expect((await agent.client.request('DELETE', `/generators/${tenant.id}/register`)).status).to.equal(204);
    expect((await tenant.client.post(approvePath)).status).to.equal(404);
    expect((await api.admin.post(`/generators/${randomUUID()}/registration-requests/${agent.id}/approve`)).body.code).to.equal(
      'generator_not_found',
    );
  });

  it("makes an admin's registration (and an admin's approval) effective at once", async () => {
    const tenant = await tenantWithSecret('consent-c');
    const byAdmin = await activeAgent('consent-c');
    const res = await api.admin.post(`/generators/${tenant.id}/register`, { agent_id: byAdmin.id });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.status).to.equal('approved');
    expect(await served(byAdmin)).to.deep.equal([tenant.objectId]);

    const approvedByAdmin = await activeAgent('consent-c');
    expect((await approvedByAdmin.client.post(`/generators/${tenant.id}/register`, {})).status).to.equal(201);
    expect(await served(approvedByAdmin)).to.deep.equal([]);
    expect((await api.admin.post(`/generators/${tenant.id}/registration-requests/${approvedByAdmin.id}/approve`)).status).to.equal(201);
    expect(await served(approvedByAdmin)).to.deep.equal([tenant.objectId]);

    // An admin registering an agent that had asked settles its request.
    const asked = await activeAgent('consent-c');
    expect((await asked.client.post(`/generators/${tenant.id}/register`, {})).status).to.equal(201);
    expect((await api.admin.post(`/generators/${tenant.id}/register`, { agent_id: asked.id })).status).to.equal(201);
    expect(await served(asked)).to.deep.equal([tenant.objectId]);
    expect((await api.admin.get(`/generators/${tenant.id}/registration-requests`)).body).to.deep.equal([]);
  });
});
