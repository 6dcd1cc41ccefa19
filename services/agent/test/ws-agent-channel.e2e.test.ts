import { expect } from 'chai';
import { eventually, startKubeApiServer, useTestInfra, type KubeApiServer } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import {
  agentEvents,
  createStack,
  deploy,
  registerAgent,
  startBroker,
  target,
  type Broker,
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap } from './support/manifests.ts';
import { RecordingProxy } from './support/recording-proxy.ts';

interface Connections {
  connections: { agent_id: string; messages_in: number }[];
}

/**
 * Our agent on the agent channel, end to end (real api, Postgres, NATS, kube-apiserver, the agent's
 * real main): hints drive its reconcile, uplinks go as frames; when the hub refuses the upgrade or
 * the channel is cut it works on long-poll and REST. A recording proxy in front of the api shows
 * which path each call took. Every assertion waits for an outcome; nothing is timed.
 */
describe('ws: our agent on the agent channel (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  const running: { proc: RunningAgentProcess; proxy: RecordingProxy }[] = [];

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
  });
  afterEach(async function () {
    for (const { proc, proxy } of running.splice(0)) {
      if (this.currentTest?.state === 'failed') console.log(proc.output().slice(-6000));
      await proc.stop();
      await proxy.close();
    }
  });
  after(async () => Promise.allSettled([broker?.stop(), kube?.stop()]));

  async function start(agent: RegisteredAgent, options: { refuse?: boolean; pollingSeconds?: number } = {}) {
    const proxy = await RecordingProxy.start(broker.url);
    proxy.refuseUpgrades = options.refuse ?? false;
    const env = { BROKKR__AGENT__POLLING_INTERVAL: String(options.pollingSeconds ?? 3), BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '600' };
    const proc = await spawnAgent(proxy.url, agent, kube.kubeconfigPath, { env });
    running.push({ proc, proxy });
    return { proc, proxy };
  }

  const connected = async (agentId: string) =>
    (await broker.admin.get<Connections>('/admin/ws/connections')).body.connections.find((c) => c.agent_id === agentId);
  const restCalls = (proxy: RecordingProxy, method: string, suffix: string) =>
    proxy.requests.filter((r) => r.method === method && r.url.split('?')[0]!.endsWith(suffix));

  it('connects, a deployment object is applied after the hint, events and heartbeats go as frames', async () => {
    const agent = await registerAgent(broker.admin);
    // Polling every 10 minutes and no long-poll held while the channel is up: only a hint can make it fetch in time.
    const { proxy } = await start(agent, { pollingSeconds: 600 });
    await eventually(() => connected(agent.id), { timeoutMs: 30_000, what: 'the agent on /internal/ws/agent' });
    // The first heartbeat may have gone over REST, before the channel was up.
    const restBeatsAtConnect = restCalls(proxy, 'POST', '/heartbeat').length;
    const upgrade = proxy.requests.find((r) => r.url === '/internal/ws/agent');
    expect(upgrade?.headers['user-agent']).to.match(/^brokkr-ts-agent\//);

    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const object = await deploy(broker.admin, stack, configMap('default', 'ws-hinted', { via: 'hint' }));
    await eventually(() => kubectl.get('/api/v1/namespaces/default/configmaps/ws-hinted'), { timeoutMs: 60_000, what: 'the ConfigMap' });
    await eventually(async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === object.id), {
      timeoutMs: 30_000,
      what: 'its event',
    });
    // The event and the heartbeats came over the channel, not REST, and no target-state request was held open.
    await eventually(async () => ((await connected(agent.id))?.messages_in ?? 0) >= 2 || undefined, {
      timeoutMs: 30_000,
      what: 'uplink frames',
    });
    expect(restCalls(proxy, 'POST', '/events')).to.have.length(0);
    expect(restCalls(proxy, 'POST', '/heartbeat')).to.have.length(restBeatsAtConnect);
    const record = await broker.admin.get<{ last_heartbeat: string | null }>(`/agents/${agent.id}`);
    expect(record.body.last_heartbeat).to.not.equal(null);
  });

  it('a new version of a stack it holds comes in the hint itself (target_state_patch): applied with no target-state request', async () => {
    const agent = await registerAgent(broker.admin);
    const { proc, proxy } = await start(agent, { pollingSeconds: 600 });
    await eventually(() => connected(agent.id), { timeoutMs: 30_000, what: 'the agent on /internal/ws/agent' });
    const upgrade = proxy.requests.find((r) => r.url === '/internal/ws/agent');
    expect(upgrade?.headers['brokkr-agent-features']).to.equal('target-state-patch');
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const first = await deploy(broker.admin, stack, configMap('default', 'ws-patched', { version: '1' }));
    await eventually(async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === first.id), {
      timeoutMs: 60_000,
      what: 'version 1 applied and reported',
    });
    const fetches = () => proxy.requests.filter((r) => r.method === 'GET' && r.url.includes('/target-state')).length;
    const fetchesBefore = fetches();
    await deploy(broker.admin, stack, configMap('default', 'ws-patched', { version: '2' }));
    await eventually(
      async () =>
        (await kubectl.get<{ data?: { version?: string } }>('/api/v1/namespaces/default/configmaps/ws-patched'))?.data?.version === '2'
          ? true
          : undefined,
      { timeoutMs: 60_000, what: 'version 2 applied' },
    );
    expect(fetches(), 'no target-state request for version 2').to.equal(fetchesBefore);
    const metrics = await (await fetch(`${proc.healthUrl}/metrics`)).text();
    expect(metrics).to.match(/brokkr_agent_poll_requests_total\{[^}]*status="patched"[^}]*\} [1-9]/);
  });

  it('falls back to long-poll and REST when the hub refuses the upgrade', async () => {
    const agent = await registerAgent(broker.admin);
    const { proxy } = await start(agent, { refuse: true });
    await eventually(() => restCalls(proxy, 'POST', '/heartbeat')[0], { timeoutMs: 30_000, what: 'a REST heartbeat' });
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const object = await deploy(broker.admin, stack, configMap('default', 'ws-refused', { via: 'long-poll' }));
    await eventually(() => kubectl.get('/api/v1/namespaces/default/configmaps/ws-refused'), { timeoutMs: 60_000, what: 'the ConfigMap' });
    await eventually(async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === object.id), {
      timeoutMs: 30_000,
      what: 'its event',
    });
    expect(restCalls(proxy, 'POST', '/events').length).to.be.at.least(1);
    expect(proxy.requests.some((r) => r.url.includes('/target-state') && r.url.includes('wait='))).to.equal(true);
    expect(await connected(agent.id)).to.equal(undefined);
  });

  it('ws-chaos: a cut channel moves heartbeats to REST; the agent reconnects when it is back', async () => {
    const agent = await registerAgent(broker.admin);
    const { proxy } = await start(agent);
    await eventually(() => connected(agent.id), { timeoutMs: 30_000, what: 'the agent connected' });
    proxy.refuseUpgrades = true;
    proxy.cutUpgrades();
    await eventually(async () => ((await connected(agent.id)) ? undefined : true), { timeoutMs: 30_000, what: 'the connection gone' });
    const before = restCalls(proxy, 'POST', '/heartbeat').length;
    await eventually(() => (restCalls(proxy, 'POST', '/heartbeat').length > before ? true : undefined), {
      timeoutMs: 30_000,
      what: 'a REST heartbeat while the channel is cut',
    });
    proxy.refuseUpgrades = false;
    await eventually(() => connected(agent.id), { timeoutMs: 90_000, what: 'the agent reconnected' });
  });

  it('ws-workorders: with the channel cut, work orders targeted by id are still claimed and completed', async () => {
    const agent = await registerAgent(broker.admin);
    const { proxy } = await start(agent);
    await eventually(() => connected(agent.id), { timeoutMs: 30_000, what: 'the agent connected' });
    proxy.refuseUpgrades = true;
    proxy.cutUpgrades();
    await eventually(async () => ((await connected(agent.id)) ? undefined : true), { timeoutMs: 30_000, what: 'the connection gone' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await broker.admin.post<{ id: string; status: string }>('/work-orders', {
        work_type: 'custom',
        yaml_content: configMap('default', `ws-wo-${agent.id.slice(0, 8)}-${i}`, { i: String(i) }),
        targeting: { agent_ids: [agent.id] },
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.status).to.equal('PENDING');
      ids.push(res.body.id);
    }
    for (const id of ids) {
      const log = await eventually(
        async () => {
          const res = await broker.admin.get<{ success: boolean; claimed_by: string }>(`/work-order-log/${id}`);
          return res.status === 200 ? res.body : undefined;
        },
        { timeoutMs: 90_000, what: `work order ${id} in the log` },
      );
      expect(log).to.include({ success: true, claimed_by: agent.id });
    }
  });
});
