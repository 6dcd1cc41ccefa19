import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createAgent, createGenerator, startTestApi, type TestApi } from './support/index.ts';
import { targetedStack } from './support/cluster-events.ts';

type FleetRecord = Record<string, unknown> & { agent_id: string };

const FIELDS = [
  'agent_id',
  'name',
  'cluster_name',
  'status',
  'ws_connected',
  'connected_since',
  'last_heartbeat',
  'heartbeat_age_seconds',
  'pending_object_count',
  'pending_work_orders',
  'claimed_work_orders',
  'last_event_at',
  'seconds_since_last_event',
  'health_failing',
  'health_degraded',
  'k8s_reachable',
  'k8s_api_latency_ms',
];

/** The fleet view and the PAK list: GET /fleet, /agents/{id}/fleet-status, /paks, the heartbeat-age metric. */
describe('fleet (GET /fleet, /agents/{id}/fleet-status, /paks)', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => (api = await startTestApi(infra)));
  after(() => api?.stop());

  const record = async (agentId: string) => {
    const res = await api.admin.get<{ record: FleetRecord; recent_events: Record<string, unknown>[] }>(`/agents/${agentId}/fleet-status`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it("a new agent's record: the 17 fields in Brokkr's order, nulls where it never reported", async () => {
    const { agent } = await createAgent(api.admin);
    const rows = (await api.admin.get<FleetRecord[]>('/fleet')).body;
    const row = rows.find((r) => r.agent_id === agent.id)!;
    expect(Object.keys(row)).to.deep.equal(FIELDS);
    expect(row).to.deep.equal({
      agent_id: agent.id,
      name: agent.name,
      cluster_name: agent.cluster_name,
      status: 'INACTIVE',
      ws_connected: false,
      connected_since: null,
      last_heartbeat: null,
      heartbeat_age_seconds: null,
      pending_object_count: 0,
      pending_work_orders: 0,
      claimed_work_orders: 0,
      last_event_at: null,
      seconds_since_last_event: null,
      health_failing: 0,
      health_degraded: 0,
      k8s_reachable: null,
      k8s_api_latency_ms: null,
    });
  });

  it('counts pending objects, pending and claimed work orders, health and events as the agent works', async () => {
    const { stack, agent } = await targetedStack(api.admin);
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    const created = await api.admin.post<{ id: string }>(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    expect(created.status, created.text).to.equal(201);
    const objectId = created.body.id;
    const order = await api.admin.post<{ id: string }>('/work-orders', {
      work_type: 'custom',
      yaml_content: 'kind: Job',
      targeting: { agent_ids: [agent.id] },
    });
    expect(order.status, order.text).to.equal(201);
    expect((await record(agent.id)).record).to.include({ pending_object_count: 1, pending_work_orders: 1, claimed_work_orders: 0 });

    expect((await agent.client.post(`/work-orders/${order.body.id}/claim`, { agent_id: agent.id })).status).to.equal(200);
    const event = await agent.client.post(`/agents/${agent.id}/events`, {
      agent_id: agent.id,
      deployment_object_id: objectId,
      event_type: 'DEPLOY',
      status: 'SUCCESS',
    });
    expect(event.status, event.text).to.equal(201);
    const health = await agent.client.patch(`/agents/${agent.id}/health-status`, {
      deployment_objects: [{ id: objectId, status: 'failing', summary: null, checked_at: new Date().toISOString() }],
    });
    expect(health.status, health.text).to.equal(200);
    expect((await agent.client.post(`/agents/${agent.id}/heartbeat`, { k8s_reachable: false, k8s_api_latency_ms: null })).status).to.equal(
      204,
    );

    const { record: r, recent_events } = await record(agent.id);
    expect(r).to.include({
      status: 'ACTIVE',
      pending_object_count: 0,
      pending_work_orders: 0,
      claimed_work_orders: 1,
      health_failing: 1,
      health_degraded: 0,
      k8s_reachable: false,
      k8s_api_latency_ms: null,
    });
    expect(r.last_heartbeat).to.be.a('string');
    expect(r.heartbeat_age_seconds).to.be.a('number').and.at.least(0);
    expect(r.last_event_at).to.equal(recent_events[0]!.created_at);
    expect(recent_events.map((e) => e.id)).to.deep.equal([event.body.id]);

    // A newer object supersedes the one reported failing: it is pending again and the stale health row no longer counts.
    expect((await api.admin.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'kind: Secret\n' })).status).to.equal(201);
    expect((await record(agent.id)).record).to.include({ pending_object_count: 1, health_failing: 0 });
  });

  it('recent_events holds the 20 newest, newest first', async () => {
    const { stack, agent } = await targetedStack(api.admin);
    const objectId = (await api.admin.post<{ id: string }>(`/stacks/${stack.id}/deployment-objects`, { yaml_content: 'a: 1\n' })).body.id;
    for (let i = 0; i < 23; i++) {
      const res = await agent.client.post(`/agents/${agent.id}/events`, {
        agent_id: agent.id,
        deployment_object_id: objectId,
        event_type: 'DEPLOY',
        status: 'FAILURE',
        message: `attempt ${i}`,
      });
      expect(res.status).to.equal(201);
    }
    const { recent_events } = await record(agent.id);
    expect(recent_events.map((e) => e.message)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `attempt ${22 - i}`));
  });

  it('?pak_id keeps the agents registered with that generator; an unknown id gives []; a malformed one is 400', async () => {
    const gen = await createGenerator(api.admin);
    const registered = await createAgent(api.admin, { generator_ids: [gen.generator.id] });
    await createAgent(api.admin);
    const rows = (await api.admin.get<FleetRecord[]>('/fleet', { query: { pak_id: gen.generator.id } })).body;
    expect(rows.map((r) => r.agent_id)).to.deep.equal([registered.agent.id]);
    expect((await api.admin.get('/fleet', { query: { pak_id: '00000000-0000-4000-8000-000000000000' } })).body).to.deep.equal([]);
    const bad = await api.admin.get('/fleet', { query: { pak_id: 'nope' } });
    expect([bad.status, bad.body.code]).to.deep.equal([400, 'invalid_query']);
  });

  it('admin only: 403 admin_required for generators and agents; 404 agent_not_found for a missing or deleted agent', async () => {
    const { agent, gen } = await targetedStack(api.admin);
    for (const client of [gen.client, agent.client]) {
      for (const path of ['/fleet', `/agents/${agent.id}/fleet-status`, '/paks']) {
        const res = await client.get(path);
        expect([res.status, res.body.code], path).to.deep.equal([403, 'admin_required']);
      }
    }
    const missing = await api.admin.get('/agents/00000000-0000-4000-8000-000000000000/fleet-status');
    expect([missing.status, missing.body.code]).to.deep.equal([404, 'agent_not_found']);
    expect((await api.admin.delete(`/agents/${agent.id}`)).status).to.equal(204);
    expect((await api.admin.get(`/agents/${agent.id}/fleet-status`)).status).to.equal(404);
    expect((await api.admin.get<FleetRecord[]>('/fleet')).body.map((r) => r.agent_id)).to.not.include(agent.id);
  });

  it('GET /paks lists the live non-system generators by id and name (admin-generator included, __system__ and deleted ones not)', async () => {
    const kept = await createGenerator(api.admin);
    const gone = await createGenerator(api.admin);
    expect((await api.admin.delete(`/generators/${gone.generator.id}`)).status).to.equal(204);
    const paks = (await api.admin.get<{ id: string; name: string }[]>('/paks')).body;
    const names = paks.map((p) => p.name);
    expect(names).to.include.members(['admin-generator', kept.generator.name]);
    expect(names).to.not.include('__system__');
    expect(names).to.not.include(gone.generator.name);
    expect(paks.find((p) => p.id === kept.generator.id)).to.deep.equal({ id: kept.generator.id, name: kept.generator.name });
  });

  it('brokkr_agent_heartbeat_age_seconds has one series per live agent that heartbeated', async () => {
    const { agent } = await targetedStack(api.admin);
    const silent = await createAgent(api.admin);
    expect((await agent.client.post(`/agents/${agent.id}/heartbeat`, {})).status).to.equal(204);
    const metrics = await (await fetch(api.metricsUrl)).text();
    const series = metrics.split('\n').filter((l) => l.startsWith('brokkr_agent_heartbeat_age_seconds{'));
    const mine = series.find((l) => l.includes(`agent_id="${agent.id}"`));
    expect(mine, metrics.slice(0, 200)).to.match(/ \d+$/);
    expect(series.some((l) => l.includes(silent.agent.id))).to.equal(false);
  });
});
