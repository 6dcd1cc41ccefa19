import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { adminGeneratorId, createAgent, createStack, startTestApi, type ApiClient, type TestApi } from './support/index.ts';

/** Deployment health: PATCH /agents/{id}/health-status and the two admin reads. */

const summary = (over: Record<string, unknown> = {}) => ({ pods_ready: 1, pods_total: 1, conditions: [], resources: [], ...over });

describe('api deployment health', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let stackId: string;
  let doA: string;
  let doB: string;
  let agent1: { id: string; client: ApiClient };
  let agent2: { id: string; client: ApiClient };

  async function newObject(name: string): Promise<string> {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
    const res = await api.admin.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  const report = (client: ApiClient, agentId: string, records: unknown[]) =>
    client.patch(`/agents/${agentId}/health-status`, { deployment_objects: records });

  before(async () => {
    api = await startTestApi(infra);
    stackId = (await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) })).id;
    doA = await newObject('a');
    doB = await newObject('b');
    const a1 = await createAgent(api.admin);
    const a2 = await createAgent(api.admin);
    agent1 = { id: a1.agent.id, client: a1.client };
    agent2 = { id: a2.agent.id, client: a2.client };
    // Agents report only on objects they are served (agent-reports.test.ts).
    for (const id of [agent1.id, agent2.id])
      await api.sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [id, stackId]);
  });

  after(async () => {
    await api?.stop();
  });

  it('accepts a report from the agent itself (200, empty body) and upserts one row per agent and object', async () => {
    const first = await report(agent1.client, agent1.id, [
      { id: doA, status: 'healthy', summary: summary(), checked_at: '2026-01-01T00:00:00Z' },
    ]);
    expect(first.status, first.text).to.equal(200);
    expect(first.text).to.equal('');
    const second = await report(agent1.client, agent1.id, [
      {
        id: doA,
        status: 'degraded',
        summary: summary({ pods_ready: 0, conditions: ['CrashLoopBackOff'] }),
        checked_at: '2026-01-01T00:01:00Z',
      },
    ]);
    expect(second.status).to.equal(200);
    const { rows } = await api.sql.query('SELECT status, summary, checked_at FROM deployment_health WHERE agent_id = $1', [agent1.id]);
    expect(rows).to.have.length(1);
    expect(rows[0].status).to.equal('degraded');
    expect(JSON.parse(rows[0].summary)).to.deep.equal(summary({ pods_ready: 0, conditions: ['CrashLoopBackOff'] }));
    expect(new Date(rows[0].checked_at).toISOString()).to.equal('2026-01-01T00:01:00.000Z');
  });

  it('accepts an empty list, and an admin report for an agent', async () => {
    expect((await report(agent1.client, agent1.id, [])).status).to.equal(200);
    expect((await report(api.admin, agent2.id, [{ id: doB, status: 'unknown', checked_at: '2026-01-01T00:00:00Z' }])).status).to.equal(200);
  });

  it('refuses another agent (403 agent_pak_mismatch)', async () => {
    const res = await report(agent2.client, agent1.id, []);
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('agent_pak_mismatch');
  });

  it('rejects the whole batch when one status is unknown (422 invalid_health_record)', async () => {
    const res = await report(agent2.client, agent2.id, [
      { id: doA, status: 'healthy', checked_at: '2026-01-02T00:00:00Z' },
      { id: doB, status: 'sick', checked_at: '2026-01-02T00:00:00Z' },
    ]);
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('invalid_health_record');
    const { rows } = await api.sql.query('SELECT 1 FROM deployment_health WHERE agent_id = $1 AND deployment_object_id = $2', [
      agent2.id,
      doA,
    ]);
    expect(rows).to.have.length(0);
  });

  it('answers 422 foreign_key_violation for an unknown deployment object, 422 for a malformed body', async () => {
    const unknown = await report(agent2.client, agent2.id, [
      { id: '00000000-0000-4000-8000-000000000000', status: 'healthy', checked_at: '2026-01-02T00:00:00Z' },
    ]);
    expect(unknown.status).to.equal(422);
    expect(unknown.body.code).to.equal('foreign_key_violation');
    const malformed = await report(agent2.client, agent2.id, [{ id: doA, status: 'healthy' }]);
    expect(malformed.status).to.equal(422);
  });

  it('keeps the last record when the same object appears twice in one batch', async () => {
    const res = await report(agent2.client, agent2.id, [
      { id: doA, status: 'failing', checked_at: '2026-01-03T00:00:00Z' },
      { id: doA, status: 'healthy', checked_at: '2026-01-03T00:00:01Z' },
    ]);
    expect(res.status, res.text).to.equal(200);
    const { rows } = await api.sql.query('SELECT status FROM deployment_health WHERE agent_id = $1 AND deployment_object_id = $2', [
      agent2.id,
      doA,
    ]);
    expect(rows.map((r) => r.status)).to.deep.equal(['healthy']);
  });

  it('GET /deployment-objects/{id}/health lists records newest check first with the worst status overall', async () => {
    // agent1: degraded (2026-01-01T00:01), agent2: healthy (2026-01-03)
    const res = await api.admin.get(`/deployment-objects/${doA}/health`);
    expect(res.status).to.equal(200);
    expect(res.body.deployment_object_id).to.equal(doA);
    expect(res.body.overall_status).to.equal('degraded');
    expect(res.body.health_records.map((r: { agent_id: string }) => r.agent_id)).to.deep.equal([agent2.id, agent1.id]);
    const record = res.body.health_records[1];
    expect(Object.keys(record).sort()).to.deep.equal(
      ['agent_id', 'checked_at', 'created_at', 'deployment_object_id', 'id', 'status', 'summary', 'updated_at'].sort(),
    );
    expect(record.summary).to.be.a('string');
  });

  it('GET /deployment-objects/{id}/health is 200 unknown for an id without records, and admin only', async () => {
    const res = await api.admin.get('/deployment-objects/00000000-0000-4000-8000-000000000000/health');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ overall_status: 'unknown', health_records: [] });
    const denied = await agent1.client.get(`/deployment-objects/${doA}/health`);
    expect(denied.status).to.equal(403);
    expect(denied.body.code).to.equal('admin_required');
  });

  it('GET /stacks/{id}/health groups per deployment object and counts agents per status', async () => {
    await report(agent1.client, agent1.id, [{ id: doB, status: 'failing', checked_at: '2026-01-04T00:00:00Z' }]);
    const res = await api.admin.get(`/stacks/${stackId}/health`);
    expect(res.status).to.equal(200);
    expect(res.body.stack_id).to.equal(stackId);
    expect(res.body.overall_status).to.equal('failing');
    const byId = Object.fromEntries(res.body.deployment_objects.map((g: { id: string }) => [g.id, g]));
    expect(byId[doA]).to.deep.equal({ id: doA, status: 'degraded', healthy_agents: 1, degraded_agents: 1, failing_agents: 0 });
    // agent2 reported unknown, agent1 failing
    expect(byId[doB]).to.deep.equal({ id: doB, status: 'failing', healthy_agents: 0, degraded_agents: 0, failing_agents: 1 });
    expect((await agent1.client.get(`/stacks/${stackId}/health`)).status).to.equal(403);
  });

  it('leaves soft-deleted deployment objects out of the stack health', async () => {
    const other = (await createStack(api.admin, { generator_id: await adminGeneratorId(api.admin) })).id;
    const res = await api.admin.get(`/stacks/${other}/health`);
    expect(res.body).to.deep.equal({ stack_id: other, overall_status: 'unknown', deployment_objects: [] });
    await api.sql.query('UPDATE deployment_objects SET deleted_at = now() WHERE id = $1', [doB]);
    const after = await api.admin.get(`/stacks/${stackId}/health`);
    expect(after.body.deployment_objects.map((g: { id: string }) => g.id)).to.deep.equal([doA]);
    expect(after.body.overall_status).to.equal('degraded');
  });
});
