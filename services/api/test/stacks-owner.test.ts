import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  auditMessages,
  createGenerator,
  createStack,
  insertAgentRow,
  startTestApi,
  type ApiClient,
  type TestApi,
} from './support/index.ts';

/**
 * A generator must not move its stack to another generator, or its objects
 * reach agents that registered (consented) only with that other generator. An admin may move it.
 */
describe('api stack owner (generator_id) changes', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let g1: { id: string; client: ApiClient };
  let g2: { id: string; client: ApiClient };

  const stackObjectIds = async (agent: { id: string; client: ApiClient }) => {
    const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    return (res.body as { stack_id: string }[]).map((o) => o.stack_id);
  };

  before(async () => {
    api = await startTestApi(infra);
    const first = await createGenerator(api.admin);
    const second = await createGenerator(api.admin);
    g1 = { id: first.generator.id, client: first.client };
    g2 = { id: second.generator.id, client: second.client };
  });

  after(async () => {
    await api?.stop();
  });

  it("refuses a generator moving its own stack to another generator (403 stack_owner_change_denied), so G1's agents never get G2's objects", async () => {
    // An agent that consented to G1 only, matching every stack labelled `web`.
    const agent = await insertAgentRow(api.sql, { status: 'ACTIVE', labels: ['web'], registeredWith: [g1.id] });
    const agentClient = { id: agent.id, client: api.admin.as(agent.pak) };
    const stack = await createStack(g2.client, { generator_id: g2.id });
    expect((await g2.client.post(`/stacks/${stack.id}/labels`, 'web')).status).to.equal(201);
    expect((await g2.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' })).status).to.equal(201);
    expect(await stackObjectIds(agentClient)).to.not.include(stack.id);

    const full = (await g2.client.get(`/stacks/${stack.id}`)).body;
    const moved = await g2.client.put(`/stacks/${stack.id}`, { ...full, generator_id: g1.id });
    expect(moved.status, moved.text).to.equal(403);
    expect(moved.body).to.deep.equal({
      code: 'stack_owner_change_denied',
      message: "Only an admin can change a stack's generator",
      details: { generator_id: g2.id, requested_generator_id: g1.id },
    });
    expect((await api.admin.get(`/stacks/${stack.id}`)).body).to.include({ generator_id: g2.id, name: full.name });
    expect(await stackObjectIds(agentClient)).to.not.include(stack.id);

    const audit = await eventually(async () =>
      (await auditMessages(api.natsUrl, 'stack.owner_change_denied')).find((a) => a.resource_id === stack.id),
    );
    expect(audit).to.include({ actor_type: 'generator', actor_id: g2.id, resource_type: 'stack' });
    expect(audit.details).to.deep.equal({ generator_id: g2.id, requested_generator_id: g1.id });
  });

  it('still lets a generator update its stack when generator_id stays its own', async () => {
    const stack = await createStack(g2.client, { generator_id: g2.id });
    const full = (await g2.client.get(`/stacks/${stack.id}`)).body;
    const res = await g2.client.put(`/stacks/${stack.id}`, { ...full, description: 'kept owner' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ generator_id: g2.id, description: 'kept owner' });
  });

  it('checks 404/403 and the body id before the owner (the generator of another stack gets stack_not_owned)', async () => {
    const stack = await createStack(g1.client, { generator_id: g1.id });
    const full = (await g1.client.get(`/stacks/${stack.id}`)).body;
    const foreign = await g2.client.put(`/stacks/${stack.id}`, { ...full, generator_id: g2.id });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.code).to.equal('stack_not_owned');
    const mismatch = await g1.client.put(`/stacks/${stack.id}`, { ...full, id: crypto.randomUUID(), generator_id: g2.id });
    expect(mismatch.status).to.equal(400);
    expect(mismatch.body.code).to.equal('stack_id_mismatch');
  });

  it('lets an admin move a stack; stack.updated records the old and the new owner', async () => {
    const stack = await createStack(g2.client, { generator_id: g2.id });
    const full = (await api.admin.get(`/stacks/${stack.id}`)).body;
    const res = await api.admin.put(`/stacks/${stack.id}`, { ...full, generator_id: g1.id });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.generator_id).to.equal(g1.id);
    const audit = await eventually(async () => (await auditMessages(api.natsUrl, 'stack.updated')).find((a) => a.resource_id === stack.id));
    expect(audit).to.include({ actor_type: 'admin' });
    expect(audit.details).to.deep.equal({ name: full.name, old_generator_id: g2.id, new_generator_id: g1.id });
    // The new owner has the stack now; the old one has lost it.
    expect((await g1.client.get(`/stacks/${stack.id}`)).status).to.equal(200);
    expect((await g2.client.get(`/stacks/${stack.id}`)).body.code).to.equal('stack_not_owned');
  });
});
