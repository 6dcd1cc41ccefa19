import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { auditMessages, collectCore, createGenerator, insertAgentRow, startTestApi, uniqueName, type TestApi } from './support/index.ts';

describe('api generator registrations', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  it('lets an admin register an agent (201), refuses a second time (409 already_registered) and audits it', async () => {
    const { generator } = await createGenerator(api.admin);
    const agent = await insertAgentRow(api.sql);
    const notifications = await collectCore(api.natsUrl, `brokkr.notify.agent.${agent.id}`);
    try {
      const res = await api.admin.post(`/generators/${generator.id}/register`, { agent_id: agent.id });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ agent_id: agent.id, generator_id: generator.id, status: 'approved' });
      // Brokkr's fields, the grant (an addition Brokkr's clients ignore) and the consent status.
      expect(res.body).to.have.all.keys('id', 'agent_id', 'generator_id', 'registered_at', 'grant', 'status');
      await eventually(() => notifications.messages.length > 0, { what: 'agent notification' });
      const again = await api.admin.post(`/generators/${generator.id}/register`, { agent_id: agent.id });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('already_registered');
    } finally {
      await notifications.close();
    }
    const entry = await eventually(async () =>
      (await auditMessages(api.natsUrl, 'agent.registered')).find((e) => e.resource_id === agent.id),
    );
    expect(entry).to.include({ actor_type: 'admin', resource_type: 'agent' });
    expect(entry.details).to.deep.equal({ generator_id: generator.id });
  });

  it('lets an agent ask to register itself with `{}` (body ignored) and audits the agent as actor', async () => {
    const { generator } = await createGenerator(api.admin);
    const agent = await insertAgentRow(api.sql);
    const other = await insertAgentRow(api.sql);
    const res = await api.admin.as(agent.pak).post(`/generators/${generator.id}/register`, { agent_id: other.id });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ agent_id: agent.id, status: 'pending' });
    const empty = await api.admin.as(other.pak).request('POST', `/generators/${generator.id}/register`);
    expect(empty.status).to.equal(201);
    const entry = await eventually(async () =>
      (await auditMessages(api.natsUrl, 'agent.registration_requested')).find((e) => e.resource_id === agent.id),
    );
    expect(entry).to.include({ actor_type: 'agent', actor_id: agent.id });
  });

  it('answers 403 forbidden to generators, 400 missing_agent_id to admins without a body, 404 for unknown ids', async () => {
    const { generator, client } = await createGenerator(api.admin);
    const agent = await insertAgentRow(api.sql);
    const byGenerator = await client.post(`/generators/${generator.id}/register`, { agent_id: agent.id });
    expect(byGenerator.status).to.equal(403);
    expect(byGenerator.body.code).to.equal('forbidden');
    const missing = await api.admin.post(`/generators/${generator.id}/register`, {});
    expect(missing.status).to.equal(400);
    expect(missing.body.code).to.equal('missing_agent_id');
    const unknownGenerator = await api.admin.post(`/generators/${randomUUID()}/register`, { agent_id: agent.id });
    expect(unknownGenerator.status).to.equal(404);
    expect(unknownGenerator.body.code).to.equal('generator_not_found');
    const unknownAgent = await api.admin.post(`/generators/${generator.id}/register`, { agent_id: randomUUID() });
    expect(unknownAgent.status).to.equal(404);
    expect(unknownAgent.body.code).to.equal('agent_not_found');
    const badId = await api.admin.post(`/generators/${generator.id}/register`, { agent_id: 'nope' });
    expect(badId.status).to.equal(422);
  });

  it("deregisters idempotently (204) and removes the agent's targets on that generator's stacks", async () => {
    const { generator } = await createGenerator(api.admin);
    const otherGen = await createGenerator(api.admin);
    const agent = await insertAgentRow(api.sql);
    for (const g of [generator.id, otherGen.generator.id]) {
      expect((await api.admin.post(`/generators/${g}/register`, { agent_id: agent.id })).status).to.equal(201);
    }
    const stacks = await api.sql.query<{ id: string; generator_id: string }>(
      'INSERT INTO stacks (name, generator_id) VALUES ($1, $2), ($3, $4) RETURNING id, generator_id',
      [uniqueName('s'), generator.id, uniqueName('s'), otherGen.generator.id],
    );
    for (const s of stacks.rows) await api.sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [agent.id, s.id]);

    const res = await api.admin.delete(`/generators/${generator.id}/register`, { json: { agent_id: agent.id } });
    expect(res.status).to.equal(204);
    const targets = await api.sql.query<{ generator_id: string }>(
      'SELECT s.generator_id FROM agent_targets t JOIN stacks s ON s.id = t.stack_id WHERE t.agent_id = $1',
      [agent.id],
    );
    expect(targets.rows.map((r) => r.generator_id)).to.deep.equal([otherGen.generator.id]);
    expect((await api.admin.delete(`/generators/${generator.id}/register`, { json: { agent_id: agent.id } })).status).to.equal(204);
    const self = await api.admin.as(agent.pak).request('DELETE', `/generators/${otherGen.generator.id}/register`);
    expect(self.status).to.equal(204);
    const entry = await eventually(async () =>
      (await auditMessages(api.natsUrl, 'agent.deregistered')).find((e) => e.actor_id === agent.id),
    );
    expect(entry.details).to.deep.equal({ generator_id: otherGen.generator.id });
  });

  it('lists registered agents for the admin and the generator itself', async () => {
    const { generator, client } = await createGenerator(api.admin);
    const agent = await insertAgentRow(api.sql);
    await api.admin.post(`/generators/${generator.id}/register`, { agent_id: agent.id });
    for (const c of [api.admin, client]) {
      const res = await c.get(`/generators/${generator.id}/registered-agents`);
      expect(res.status).to.equal(200);
      expect(res.body.map((r: { agent_id: string }) => r.agent_id)).to.deep.equal([agent.id]);
    }
    const other = await createGenerator(api.admin);
    const denied = await other.client.get(`/generators/${generator.id}/registered-agents`);
    expect(denied.status).to.equal(403);
    expect(denied.body.code).to.equal('not_authorized');
    expect((await api.admin.get(`/generators/${randomUUID()}/registered-agents`)).body.code).to.equal('generator_not_found');
    const { rows } = await api.sql.query<{ id: string }>('SELECT id FROM generators WHERE is_system');
    const system = await api.admin.get(`/generators/${rows[0]!.id}/registered-agents`);
    expect(system.status).to.equal(200);
    expect(system.body).to.be.an('array');
  });
});
