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
  type AgentEvent,
  type Broker,
  type DeploymentObject,
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap, namespace, stream } from './support/manifests.ts';
import { ScheduleProxy } from './support/schedule-proxy.ts';

/** RFC 5545 UTC form of an instant, to the second: 20261128T133000Z. */
const icalUtc = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/[-:]/g, '').replace('.000', '');

/**
 * Maintenance windows enforced by the agent (docs/maintenance-windows.md), on one real
 * kube-apiserver shared by two agents (each owns only its own objects): a deny window selects
 * the `env=prod` agent, which then neither applies nor reports an apply while the `env=dev` agent
 * goes ahead; a hub that keeps serving the versions and stops serving the schedule changes no
 * object; and the held version goes out once the window closes. Every wait is for an event or a
 * state, never for a time.
 */
describe('agent maintenance windows (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  let proxy: ScheduleProxy;
  let prod: RegisteredAgent;
  let dev: RegisteredAgent;
  let prodStack: string;
  let devStack: string;
  const procs: RunningAgentProcess[] = [];

  const PROD_AGENT_NS = 'brokkr-agent-prod';
  const spawnProd = () => spawnAgent(proxy.url, prod, kube.kubeconfigPath, { env: { BROKKR__AGENT__NAMESPACE: PROD_AGENT_NS } });
  const manifest = (ns: string, version: string) => stream(namespace(ns), configMap(ns, 'settings', { version }));
  const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/settings`;
  const eventOf = (agent: RegisteredAgent, d: DeploymentObject, match: (e: AgentEvent) => boolean, what: string) =>
    eventually(async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === d.id && match(e)), {
      timeoutMs: 90_000,
      what,
    });
  const applied = (e: AgentEvent) => (e.event_type === 'APPLIED' || e.event_type === 'UPDATED') && e.status === 'SUCCESS';
  const blocked = (e: AgentEvent) => e.event_type === 'window_blocked' && e.status === 'BLOCKED';

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
    proxy = await ScheduleProxy.start(broker.url);
    [prod, dev] = [await registerAgent(broker.admin), await registerAgent(broker.admin)];
    for (const [agent, label] of [
      [prod, 'env=prod'],
      [dev, 'env=dev'],
    ] as const)
      expect((await broker.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    [prodStack, devStack] = [await createStack(broker.admin), await createStack(broker.admin)];
    await target(broker.admin, prod.id, prodStack);
    await target(broker.admin, dev.id, devStack);
    // The prod agent reaches the hub through the proxy (HTTP only), which can withhold its schedule;
    // it keeps the schedule in a ConfigMap of its own namespace.
    expect(
      (await kubectl.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROD_AGENT_NS } })).status,
    ).to.equal(201);
    procs.push(await spawnProd(), await spawnAgent(broker.url, dev, kube.kubeconfigPath));
  });

  after(async () => {
    await Promise.allSettled(procs.map((p) => p.stop()));
    await proxy?.close();
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const p of procs) console.log(p.output().slice(-6000));
  });

  it('holds every version on the prod agent during its deny window, also from a hub that stops serving the schedule and across a restart, and applies it when the window closes', async () => {
    const first = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v1'));
    await eventOf(prod, first, applied, 'prod applies v1 before any window');
    const before = (await kubectl.get<{ metadata: { resourceVersion: string } }>(cmPath('shop-prod')))!.metadata.resourceVersion;

    // A deny window open now (it started a minute ago) for a day, on the agents labelled env=prod.
    const start = Date.now() - 60_000;
    const window = await broker.admin.post('/maintenance-windows', {
      name: 'prod freeze',
      type: 'deny',
      rrule: `DTSTART:${icalUtc(start)}\nRRULE:FREQ=DAILY`,
      duration: 'PT1H',
      agent_labels: ['env=prod'],
    });
    expect(window.status, window.text).to.equal(201);

    const second = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v2'));
    const devVersion = await deploy(broker.admin, devStack, manifest('shop-dev', 'v2'));
    await eventOf(dev, devVersion, applied, 'dev applies v2 (no window selects it)');
    const held = await eventOf(prod, second, blocked, 'prod reports v2 held by the window');
    expect(held.message).to.include(window.body.id).and.include(prodStack);

    // The hub goes on serving versions but withholds the schedule: the agent keeps the last one it got.
    proxy.withholdSchedule = true;
    const third = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v3'));
    await eventOf(prod, third, blocked, 'prod reports v3 held, from a hub that served no schedule');
    const events = await agentEvents(broker.admin, prod.id);
    expect(events.filter((e) => e.deployment_object_id !== first.id && applied(e))).to.deep.equal([]);
    // Once per held version, however many passes and schedule reads came between.
    expect(events.filter((e) => e.deployment_object_id === second.id && blocked(e))).to.have.length(1);
    const during = (await kubectl.get<{ metadata: { resourceVersion: string }; data: { version: string } }>(cmPath('shop-prod')))!;
    expect([during.metadata.resourceVersion, during.data.version]).to.deep.equal([before, 'v1']);

    // Restarted while the hub still withholds the schedule: the agent holds the schedule it kept in its cluster.
    await procs[0]!.stop();
    procs[0] = await spawnProd();
    const fourth = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v4'));
    await eventOf(prod, fourth, blocked, 'the restarted prod agent reports v4 held');
    const restarted = (await kubectl.get<{ metadata: { resourceVersion: string } }>(cmPath('shop-prod')))!;
    expect(restarted.metadata.resourceVersion).to.equal(before);

    // The window now closes a few seconds after this change reaches the agent; the agent applies v4 at that boundary by itself.
    proxy.withholdSchedule = false;
    const closesAt = Math.ceil((Date.now() + 5000) / 1000) * 1000;
    const patched = await broker.admin.patch(`/maintenance-windows/${window.body.id}`, {
      duration: Math.round((closesAt - Math.floor(start / 1000) * 1000) / 1000),
    });
    expect(patched.status, patched.text).to.equal(200);
    const done = await eventOf(prod, fourth, applied, 'prod applies v4 once the window closed');
    expect(Date.parse(done.created_at)).to.be.at.least(closesAt);
    expect((await kubectl.get<{ data: { version: string } }>(cmPath('shop-prod')))!.data.version).to.equal('v4');
    // v2 and v3 were superseded while held: they were never applied.
    const superseded = (await agentEvents(broker.admin, prod.id)).filter((e) => [second.id, third.id].includes(e.deployment_object_id));
    expect(superseded.filter(applied)).to.deep.equal([]);
  });

  it('claims no work order on the prod agent while a window for the whole agent holds them; an emergency bypass lets it run', async () => {
    const window = await broker.admin.post('/maintenance-windows', {
      name: 'no jobs',
      type: 'deny',
      rrule: `DTSTART:${icalUtc(Date.now() - 60_000)}\nRRULE:FREQ=DAILY`,
      duration: 'PT1H',
      agent_labels: ['env=prod'],
      gates: ['work_orders'],
    });
    expect(window.status, window.text).to.equal(201);
    // The prod agent holds the window once it has kept it in its cluster.
    await eventually(
      async () => {
        const cm = await kubectl.get<{ data?: { schedule?: string } }>(
          `/api/v1/namespaces/${PROD_AGENT_NS}/configmaps/brokkr-agent-schedule-${prod.id}`,
        );
        return cm?.data?.schedule?.includes(window.body.id);
      },
      { timeoutMs: 60_000, what: 'the prod agent kept the window' },
    );
    const orderFor = async (agent: RegisteredAgent, ns: string) => {
      const res = await broker.admin.post('/work-orders', {
        work_type: 'custom',
        yaml_content: stream(namespace(ns), configMap(ns, 'job-input', { run: '1' })),
        max_retries: 0,
        backoff_seconds: 1,
        targeting: { agent_ids: [agent.id] },
      });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    };
    const finished = (id: string) =>
      eventually(async () => ((await broker.admin.get(`/work-order-log/${id}`)).status === 200 ? true : undefined), {
        timeoutMs: 60_000,
        what: `work order ${id} in the log`,
      });
    const [prodOrder, devOrder] = [await orderFor(prod, 'wo-prod'), await orderFor(dev, 'wo-dev')];
    await finished(devOrder);
    expect((await broker.admin.get(`/work-orders/${prodOrder}`)).body.status).to.equal('PENDING');
    expect(await kubectl.get('/api/v1/namespaces/wo-prod')).to.equal(undefined);

    const bypass = await broker.admin.post(`/maintenance-windows/${window.body.id}/bypasses`, {
      reason: 'urgent job',
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(bypass.status, bypass.text).to.equal(201);
    await finished(prodOrder);
    expect(await kubectl.get('/api/v1/namespaces/wo-prod')).to.not.equal(undefined);
  });

  it('reports drift on the prod agent but corrects it only once its drift-correction window closes', async () => {
    const start = Date.now() - 60_000;
    const window = await broker.admin.post('/maintenance-windows', {
      name: 'hands off',
      type: 'deny',
      rrule: `DTSTART:${icalUtc(start)}\nRRULE:FREQ=DAILY`,
      duration: 'PT1H',
      agent_labels: ['env=prod'],
      gates: ['drift_correction'],
    });
    expect(window.status, window.text).to.equal(201);
    await eventually(
      async () => {
        const cm = await kubectl.get<{ data?: { schedule?: string } }>(
          `/api/v1/namespaces/${PROD_AGENT_NS}/configmaps/brokkr-agent-schedule-${prod.id}`,
        );
        return cm?.data?.schedule?.includes(window.body.id);
      },
      { timeoutMs: 60_000, what: 'the prod agent kept the window' },
    );
    const edit = await kubectl.call(
      'PATCH',
      `${cmPath('shop-prod')}?fieldManager=hotfix`,
      { data: { version: 'hand-made' } },
      'application/merge-patch+json',
    );
    expect(edit.status, JSON.stringify(edit.body)).to.equal(200);
    interface Record {
      state: string;
      closed_at: string | null;
      fields: { path: string }[];
    }
    const records = async () => (await broker.admin.get<{ items: Record[] }>(`/stacks/${prodStack}/drift`)).body.items;
    await eventually(async () => (await records()).find((r) => r.state === 'open' && r.fields.some((f) => f.path === '/data/version')), {
      timeoutMs: 60_000,
      what: 'the hand edit reported as drift',
    });
    expect((await kubectl.get<{ data: { version: string } }>(cmPath('shop-prod')))!.data.version).to.equal('hand-made');

    // The window closes a few seconds after this change reaches the agent: then, and not before, it corrects.
    const closesAt = Math.ceil((Date.now() + 5000) / 1000) * 1000;
    const patched = await broker.admin.patch(`/maintenance-windows/${window.body.id}`, {
      duration: Math.round((closesAt - Math.floor(start / 1000) * 1000) / 1000),
    });
    expect(patched.status, patched.text).to.equal(200);
    const corrected = await eventually(async () => (await records()).find((r) => r.state === 'corrected'), {
      timeoutMs: 60_000,
      what: 'the drift corrected once the window closed',
    });
    expect(Date.parse(corrected.closed_at!)).to.be.at.least(closesAt);
    expect((await kubectl.get<{ data: { version: string } }>(cmPath('shop-prod')))!.data.version).to.equal('v4');
  });
});
