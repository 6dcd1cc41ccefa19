import { expect } from 'chai';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import {
  createAgent,
  createGenerator,
  createStack,
  readStream,
  startTestApi,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

interface TestAgent {
  id: string;
  client: ApiClient;
}

/**
 * Progressive rollouts through the API with the real maintenance service moving them on; the
 * agents are driven over REST (their apply events and health reports are what the gates read).
 * The same against real agents and clusters: test/rollouts.e2e.test.ts.
 */
describe('api progressive rollouts', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let maintenance: RunningService;
  let gen: { id: string; client: ApiClient };
  let canary: TestAgent;
  let rest: TestAgent[];

  const POLICY = {
    waves: [
      { name: 'canary', selector: { labels: ['canary'] }, soak_seconds: 0 },
      { name: 'everyone', percent: 100, soak_seconds: 0 },
    ],
    auto_rollback: true,
  };

  async function agent(labels: string[] = []): Promise<TestAgent> {
    const { agent, client } = await createAgent(api.admin, { generator_ids: [gen.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const label of labels)
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    return { id: agent.id, client };
  }

  async function stackFor(agents: TestAgent[]): Promise<string> {
    const stack = await createStack(gen.client, { generator_id: gen.id });
    for (const a of agents) {
      const res = await api.admin.post(`/agents/${a.id}/targets`, { agent_id: a.id, stack_id: stack.id });
      expect(res.status, res.text).to.equal(201);
    }
    return stack.id;
  }

  async function publish(stackId: string, version: string): Promise<string> {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "${version}"\n`;
    const res = await gen.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  /** The ids of the stack's objects the agent is served (the agents target several stacks). */
  async function served(a: TestAgent, stackId: string): Promise<string[]> {
    const res = await a.client.get(`/agents/${a.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    return (res.body as { id: string; stack_id: string }[]).filter((o) => o.stack_id === stackId).map((o) => o.id);
  }

  async function reportApplied(a: TestAgent, objectId: string, status: 'SUCCESS' | 'FAILURE', health = 'healthy'): Promise<void> {
    const event = { agent_id: a.id, deployment_object_id: objectId, event_type: 'DEPLOY', status, message: status };
    expect((await a.client.post(`/agents/${a.id}/events`, event)).status).to.equal(201);
    const report = { deployment_objects: [{ id: objectId, status: health, checked_at: new Date().toISOString() }] };
    expect((await a.client.patch(`/agents/${a.id}/health-status`, report)).status).to.equal(200);
  }

  async function latestRollout(stackId: string) {
    const res = await gen.client.get(`/stacks/${stackId}/rollouts`);
    expect(res.status, res.text).to.equal(200);
    return res.body[0];
  }

  async function rolloutEvents(rolloutId: string): Promise<string[]> {
    const all = await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS');
    return all
      .map((m) => m.data)
      .filter((e) => e.data.rollout_id === rolloutId)
      .map((e) => e.event_type);
  }

  let maintenanceUrl: string;
  /** Completed ticks of maintenance's rollouts task. */
  async function rolloutTicks(): Promise<number> {
    const text = await (await fetch(`${maintenanceUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('brokkr_maintenance_runs_total{') && l.includes('task="rollouts"') && l.includes('outcome="ok"'));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  before(async () => {
    api = await startTestApi(infra);
    const port = await freePort();
    maintenanceUrl = `http://127.0.0.1:${port}`;
    maintenance = await spawnService({
      service: 'maintenance',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__HEALTH__PORT: String(port),
        BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: '1',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    const g = await createGenerator(api.admin);
    gen = { id: g.generator.id, client: g.client };
    canary = await agent(['canary']);
    rest = [await agent(), await agent(), await agent()];
  });

  after(async () => {
    await maintenance?.stop();
    await api?.stop();
  });

  it('without a policy a new object goes to every agent at once (today behaviour, no rollout)', async () => {
    const stackId = await stackFor([canary, rest[0]!]);
    await publish(stackId, '1');
    const v2 = await publish(stackId, '2');
    expect(await served(rest[0]!, stackId)).to.deep.equal([v2]);
    expect(await latestRollout(stackId)).to.equal(undefined);
  });

  it('a two-wave rollout that succeeds: nobody gets the new object before its wave, canary first, then everyone', async () => {
    const stackId = await stackFor([canary, ...rest]);
    const v1 = await publish(stackId, '1');
    const put = await gen.client.put(`/stacks/${stackId}/rollout-policy`, POLICY);
    expect(put.status, put.text).to.equal(200);
    expect(put.body.policy.waves[0]).to.include({ max_failures: 0, progress_deadline_seconds: 600 });

    const v2 = await publish(stackId, '2');
    // Before maintenance has released anything (or right after it released the canary), the
    // other agents are held on v1.
    expect(await served(rest[0]!, stackId)).to.deep.equal([v1]);

    await eventually(async () => (await served(canary, stackId)).includes(v2), { what: 'the canary to be served v2' });
    for (const a of rest) expect(await served(a, stackId)).to.deep.equal([v1]);
    const progressing = await latestRollout(stackId);
    expect(progressing).to.include({ status: 'progressing', released_wave: 0, deployment_object_id: v2, baseline_object_id: v1 });
    expect(progressing.waves.map((w: { agents: number }) => w.agents)).to.deep.equal([1, 3]);
    // Why v2 is not on a second-wave agent yet: the rollout, its wave not released.
    const why = await gen.client.get(`/stacks/${stackId}/agents/${rest[0]!.id}/status`);
    expect(why.body).to.deep.include({
      state: 'waiting',
      reason: 'rollout',
      rollout_id: progressing.id,
      rollout_status: 'progressing',
      wave: 1,
    });

    await reportApplied(canary, v2, 'SUCCESS');
    await eventually(async () => (await served(rest[2]!, stackId)).includes(v2), { what: 'the second wave to be served v2' });
    for (const a of rest) await reportApplied(a, v2, 'SUCCESS');
    await eventually(async () => (await latestRollout(stackId)).status === 'succeeded', { what: 'the rollout to succeed' });

    const done = await latestRollout(stackId);
    expect(done.waves.map((w: { healthy: number }) => w.healthy)).to.deep.equal([1, 3]);
    await eventually(async () => (await rolloutEvents(done.id)).includes('rollout.succeeded'), { what: 'rollout.succeeded' });
    expect(await rolloutEvents(done.id)).to.deep.equal([
      'rollout.started',
      'rollout.wave_started',
      'rollout.wave_started',
      'rollout.succeeded',
    ]);
  });

  it('a failing second wave is rolled back automatically: every agent, the canary included, is served the previous object', async () => {
    const stackId = await stackFor([canary, ...rest]);
    await publish(stackId, '1');
    expect((await gen.client.put(`/stacks/${stackId}/rollout-policy`, POLICY)).status).to.equal(200);
    const v2 = await publish(stackId, '2');
    await eventually(async () => (await served(canary, stackId)).includes(v2), { what: 'the canary to be served v2' });
    await reportApplied(canary, v2, 'SUCCESS');
    for (const a of rest) await reportApplied(a, v2, 'SUCCESS');
    await eventually(async () => (await latestRollout(stackId)).status === 'succeeded', { what: 'v2 rolled out' });

    const v3 = await publish(stackId, '3');
    await eventually(async () => (await served(canary, stackId)).includes(v3), { what: 'the canary to be served v3' });
    await reportApplied(canary, v3, 'SUCCESS');
    await eventually(async () => (await served(rest[0]!, stackId)).includes(v3), { what: 'the second wave to be served v3' });
    await reportApplied(rest[0]!, v3, 'SUCCESS', 'failing');

    await eventually(async () => (await latestRollout(stackId)).status === 'rolled_back', { what: 'the automatic rollback' });
    for (const a of [canary, ...rest]) expect(await served(a, stackId), a.id).to.deep.equal([v2]);
    const rolledBack = await latestRollout(stackId);
    expect(rolledBack.message).to.match(/failed in wave "everyone".*rolled back/);
    await eventually(async () => (await rolloutEvents(rolledBack.id)).includes('rollout.rolled_back'), { what: 'rollout.rolled_back' });
    expect(await rolloutEvents(rolledBack.id)).to.include.members(['rollout.failed', 'rollout.rolled_back']);

    // The next object rolls out from v2, the version everyone is on.
    const v4 = await publish(stackId, '4');
    await eventually(async () => (await latestRollout(stackId)).deployment_object_id === v4, { what: 'the next rollout' });
    expect((await latestRollout(stackId)).baseline_object_id).to.equal(v2);
  });

  it('pause holds the next wave, resume releases it; abort serves everyone the previous object; promote everyone the new one', async () => {
    const stackId = await stackFor([canary, rest[0]!]);
    const v1 = await publish(stackId, '1');
    expect((await gen.client.put(`/stacks/${stackId}/rollout-policy`, POLICY)).status).to.equal(200);
    const v2 = await publish(stackId, '2');
    await eventually(async () => (await served(canary, stackId)).includes(v2), { what: 'the canary to be served v2' });
    const rollout = await latestRollout(stackId);

    const paused = await gen.client.post(`/rollouts/${rollout.id}/pause`);
    expect(paused.status, paused.text).to.equal(200);
    expect(paused.body.status).to.equal('paused');
    await reportApplied(canary, v2, 'SUCCESS');
    // The gate would pass now; paused, nothing moves however many times the task runs.
    const ticks = await rolloutTicks();
    await eventually(async () => (await rolloutTicks()) >= ticks + 2, { what: 'two more rollouts ticks' });
    expect(await served(rest[0]!, stackId)).to.deep.equal([v1]);
    const again = await gen.client.post(`/rollouts/${rollout.id}/pause`);
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('rollout_state_conflict');

    expect((await gen.client.post(`/rollouts/${rollout.id}/resume`)).body.status).to.equal('progressing');
    await eventually(async () => (await served(rest[0]!, stackId)).includes(v2), { what: 'the second wave after resume' });

    const aborted = await api.admin.post(`/rollouts/${rollout.id}/abort`);
    expect(aborted.status, aborted.text).to.equal(200);
    for (const a of [canary, rest[0]!]) expect(await served(a, stackId)).to.deep.equal([v1]);

    const v3 = await publish(stackId, '3');
    await eventually(async () => (await latestRollout(stackId)).deployment_object_id === v3, { what: 'the v3 rollout' });
    const promoted = await gen.client.post(`/rollouts/${(await latestRollout(stackId)).id}/promote`);
    expect(promoted.status, promoted.text).to.equal(200);
    for (const a of [canary, rest[0]!]) expect(await served(a, stackId)).to.deep.equal([v3]);
  });

  it('policies are validated (422) and only the stack owner or an admin manages policies and rollouts', async () => {
    const stackId = await stackFor([canary]);
    const bad = [
      { waves: [] },
      { waves: [{ name: 'a' }] },
      { waves: [{ name: 'a', percent: 10, selector: { labels: ['x'] } }] },
      {
        waves: [
          { name: 'a', percent: 50 },
          { name: 'b', percent: 20 },
        ],
      },
      {
        waves: [
          { name: 'a', percent: 50 },
          { name: 'a', percent: 100 },
        ],
      },
      { waves: [{ name: 'a', percent: 150 }] },
    ];
    for (const body of bad) {
      const res = await gen.client.put(`/stacks/${stackId}/rollout-policy`, body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
    }
    expect((await gen.client.get(`/stacks/${stackId}/rollout-policy`)).status).to.equal(404);

    const other = (await createGenerator(api.admin)).client;
    expect((await other.put(`/stacks/${stackId}/rollout-policy`, POLICY)).status).to.equal(403);
    expect((await canary.client.put(`/stacks/${stackId}/rollout-policy`, POLICY)).status).to.equal(403);
    expect((await gen.client.put(`/stacks/${stackId}/rollout-policy`, POLICY)).status).to.equal(200);
    await publish(stackId, '1');
    await publish(stackId, '2');
    const rollout = await latestRollout(stackId);
    expect((await other.get(`/rollouts/${rollout.id}`)).status).to.equal(403);
    expect((await other.post(`/rollouts/${rollout.id}/abort`)).status).to.equal(403);
    expect((await gen.client.get('/rollouts/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await gen.client.delete(`/stacks/${stackId}/rollout-policy`)).status).to.equal(204);
    expect((await gen.client.delete(`/stacks/${stackId}/rollout-policy`)).status).to.equal(404);
  });
});
