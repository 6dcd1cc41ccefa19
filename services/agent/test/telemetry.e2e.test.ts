import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { eventually, startKubeApiServer, startKubeCluster, useTestInfra, type KubeApiServer, type KubeCluster } from '@brokkr/testkit';
import type { KubeClient } from '../src/kube/client.ts';
import { connectKubernetes } from '../src/runtime/startup.ts';
import { createStack, deploy, registerAgent, startBroker, target, type Broker, type RegisteredAgent } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { InProcessTelemetry, KubeletLogEndpoint, stamped } from './support/telemetry.ts';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';

const STACK = 'k8s.brokkr.io/stack';

interface StoredEvent {
  reason: string;
  message: string;
  event_type: string;
  source: string | null;
  involved_object: { kind: string; name: string; uid: string | null };
}
interface StoredLine {
  pod: string;
  container: string;
  line: string;
  ts: string;
}
interface ClusterEvent {
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; uid: string };
}

const storedEvents = async (hub: Broker, stackId: string) =>
  (await hub.admin.get(`/stacks/${stackId}/events`)).body.events as StoredEvent[];

/** A one-replica Deployment; `stackId` marks it and its pod template (so its ReplicaSets and pods carry the marker too). */
function deployment(name: string, stackId?: string) {
  const annotations = stackId ? { [STACK]: stackId } : {};
  return {
    metadata: { name, annotations },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name }, annotations }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
    },
  };
}

/**
 * The agent's event streamer end to end, on a cluster where pods run (controllers, scheduler,
 * KWOK's simulated nodes): the Events are the ones the Deployment and ReplicaSet controllers and
 * the scheduler write, about objects marked with the stack or not, through the agent's own live
 * channel to the real api, read back with the hub's REST API. The streamers run in this process so
 * that they can be restarted.
 */
describe('agent telemetry: the cluster’s own Kubernetes events (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `tel-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let client: KubeClient;
  let stackId: string;
  let telemetry: InProcessTelemetry;

  const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
  const clusterEvents = async () => (await kubectl.get<{ items: ClusterEvent[] }>(`/api/v1/namespaces/${ns}/events`))!.items;
  const aboutWeb = (e: ClusterEvent) => /^web(-|$)/.test(e.involvedObject.name);
  const clusterRow = (e: ClusterEvent) => `${e.involvedObject.kind} ${e.involvedObject.uid} ${e.reason}: ${e.message}`;
  const storedRow = (e: StoredEvent) => `${e.involved_object.kind} ${e.involved_object.uid} ${e.reason}: ${e.message}`;
  /** The cluster's events about web, once the scheduler has placed `pods` of its pods (the last event of each scale-up). */
  const webEventsWhen = (pods: number) =>
    eventually(
      async () => {
        const about = (await clusterEvents()).filter(aboutWeb);
        return about.filter((e) => e.reason === 'Scheduled').length === pods ? about : undefined;
      },
      { timeoutMs: 60_000, what: `the events of ${pods} web pod(s)` },
    );
  const scale = (replicas: number) => kubectl.mergePatch(`${deployments}/web`, { spec: { replicas } });

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    kubectl = new Kubectl(kube);
    await kubectl.create('/api/v1/namespaces', { metadata: { name: ns } });
    ({ kube: client } = await connectKubernetes(kube.kubeconfigPath, 8));
    const agent = await registerAgent(hub.admin);
    stackId = await createStack(hub.admin);
    await target(hub.admin, agent.id, stackId);
    telemetry = new InProcessTelemetry({ hubUrl: hub.url, agent, kube, client, stateNamespace: ns });
    await telemetry.start();
  });
  after(async () => {
    await telemetry?.stop();
    await client?.close();
    await kubectl?.close();
    await Promise.allSettled([hub?.stop(), kube?.stop()]);
  });

  it('streams what the controllers and the scheduler say about objects of the stack, and nothing about objects without the marker', async () => {
    await kubectl.create(deployments, deployment('stranger'));
    await eventually(async () => (await clusterEvents()).some((e) => e.reason === 'Scheduled'), {
      timeoutMs: 60_000,
      what: "the stranger's events",
    });
    const web = await kubectl.create(deployments, deployment('web', stackId));
    const expected = await webEventsWhen(1);
    const stored = await eventually(async () => ((await storedEvents(hub, stackId)).length >= 3 ? storedEvents(hub, stackId) : undefined), {
      timeoutMs: 60_000,
      what: 'the events in GET /stacks/{id}/events',
    });
    // The stranger's events came first on the same watch, so they have been handled: none was sent.
    expect(stored.map(storedRow).sort()).to.deep.equal(expected.map(clusterRow).sort());
    expect(stored.map((e) => `${e.involved_object.kind} ${e.reason}`).sort()).to.deep.equal([
      'Deployment ScalingReplicaSet',
      'Pod Scheduled',
      'ReplicaSet SuccessfulCreate',
    ]);
    const scaled = stored.find((e) => e.reason === 'ScalingReplicaSet')!;
    expect(scaled).to.deep.include({ event_type: 'Normal', source: 'deployment-controller' });
    expect(scaled.involved_object).to.include({ name: 'web', uid: web.metadata.uid });
    expect(scaled.message).to.match(/^Scaled up replica set web-[a-z0-9]+ from 0 to 1$/);
    // The scheduler writes events.k8s.io/v1 Events: no source.component, its name in reportingComponent.
    expect(stored.find((e) => e.reason === 'Scheduled')).to.deep.include({ event_type: 'Normal', source: 'default-scheduler' });
  });

  it('after a restart, resumes where it was: nothing already sent is sent again, what came meanwhile is sent once', async () => {
    await telemetry.stop();
    // While the agent is away: web scales up; the controllers and the scheduler say so.
    await scale(2);
    await webEventsWhen(2);
    await telemetry.start();
    const stored = () => storedEvents(hub, stackId);
    await eventually(async () => (await stored()).some((e) => / from 1 to 2$/.test(e.message)), {
      timeoutMs: 60_000,
      what: 'the scale-up of the downtime',
    });
    // One more scale-up after the restart: once all of its events are stored, the re-listed old ones have been handled too.
    await scale(3);
    const expected = (await webEventsWhen(3)).map(clusterRow);
    await eventually(
      async () => {
        const rows = (await stored()).map(storedRow);
        return expected.every((row) => rows.includes(row));
      },
      {
        timeoutMs: 60_000,
        what: 'every event of the cluster about web',
      },
    );
    expect((await stored()).map(storedRow).sort()).to.deep.equal(expected.sort());
  });
});

/**
 * The log streamer end to end, through the agent's real log client and the apiserver's pod-log
 * proxy. The full test cluster serves no container logs (KWOK's log endpoint is not configured) and
 * its pod stages give no container an ID, which the streamer keys its tails by, so this half stays
 * on the bare apiserver and the test plays the kubelet: its pods' running containers written
 * through the status subresource, and its container-log endpoint (`KubeletLogEndpoint`).
 */
describe('agent telemetry: pod logs through the apiserver, the test playing the kubelet (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `tel-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  let client: KubeClient;
  let stackId: string;
  let logs: KubeletLogEndpoint;
  let telemetry: InProcessTelemetry;

  const lines = async () => (await hub.admin.get(`/stacks/${stackId}/logs`, { query: { limit: '5000' } })).body.lines as StoredLine[];

  async function pod(name: string, annotations: Record<string, string>, containers = ['app']) {
    await kubectl.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name, annotations },
      spec: { nodeName: 'node-1', containers: containers.map((c) => ({ name: c, image: 'busybox:1.36' })) },
    });
  }
  /** What the kubelet would report once the containers run. */
  const running = (name: string, containers: string[], instance = '1') =>
    kubectl.mergePatch(`/api/v1/namespaces/${ns}/pods/${name}/status`, {
      status: {
        phase: 'Running',
        containerStatuses: containers.map((c) => ({
          name: c,
          ready: true,
          restartCount: 0,
          image: 'busybox:1.36',
          imageID: '',
          containerID: `containerd://${name}-${c}-${instance}`,
          state: { running: { startedAt: new Date().toISOString() } },
        })),
      },
    });

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
    await kubectl.create('/api/v1/namespaces', { metadata: { name: ns } });
    ({ kube: client } = await connectKubernetes(kube.kubeconfigPath, 8));
    const agent = await registerAgent(hub.admin);
    stackId = await createStack(hub.admin);
    await target(hub.admin, agent.id, stackId);
    logs = await KubeletLogEndpoint.start(kube);
    await logs.registerNode(kubectl, 'node-1');
    telemetry = new InProcessTelemetry({ hubUrl: hub.url, agent, kube, client, stateNamespace: ns });
    await telemetry.start();
  });
  after(async () => {
    await telemetry?.stop();
    await client?.close();
    await kubectl?.close();
    await logs?.stop();
    await Promise.allSettled([hub?.stop(), kube?.stop()]);
  });

  it('streams the log lines of a pod that opts in (brokkr.io/stream-logs: "true"), and never opens the logs of one that does not', async () => {
    const t0 = new Date();
    logs.print(ns, 'quiet', 'app', stamped(t0, 'not for the hub'));
    logs.print(ns, 'chatty', 'app', stamped(t0, 'starting'), stamped(new Date(t0.getTime() + 1), 'listening on :8080'));
    await pod('quiet', { [STACK]: stackId });
    await running('quiet', ['app']);
    await pod('chatty', { [STACK]: stackId, 'brokkr.io/stream-logs': 'true' });
    await running('chatty', ['app']);
    const got = await eventually(async () => ((await lines()).length >= 2 ? lines() : undefined), {
      timeoutMs: 60_000,
      what: 'two log lines',
    });
    expect(got.map((l) => [l.pod, l.container, l.line])).to.deep.equal([
      ['chatty', 'app', 'listening on :8080'],
      ['chatty', 'app', 'starting'],
    ]);
    expect(got[1]!.ts).to.equal(new Date(`${t0.toISOString().replace('Z', '')}000001Z`).toISOString().replace('Z', '') + 'Z');
    expect(logs.requests.map((r) => r.pod)).to.not.include('quiet');
  });

  it('after a restart, resumes each tail from its cursor: nothing already sent is sent again, what came meanwhile is sent once', async () => {
    await telemetry.stop();
    // While the agent is away, the pod prints more.
    logs.print(ns, 'chatty', 'app', stamped(new Date(Date.now() + 5), 'request served'));
    await telemetry.start();

    await eventually(async () => (await lines()).some((l) => l.line === 'request served'), { timeoutMs: 60_000, what: 'the new line' });
    expect((await lines()).map((l) => l.line)).to.deep.equal(['request served', 'listening on :8080', 'starting']);
    // The tail resumed from the cursor, not from the start of the container's log.
    expect(logs.requests.filter((r) => r.pod === 'chatty').at(-1)!.sinceTime).to.be.a('string');
  });

  it('a pod deleted while its log is followed: the tail is closed and the streamer carries on', async () => {
    await eventually(() => logs.openStreams('chatty') === 1, { what: "chatty's log followed" });
    expect((await kubectl.call('DELETE', `/api/v1/namespaces/${ns}/pods/chatty?gracePeriodSeconds=0`)).status).to.equal(200);
    await eventually(() => logs.openStreams('chatty') === 0, { what: "chatty's log stream closed" });
    // Still streaming: a new pod that opts in is followed.
    logs.print(ns, 'late', 'app', stamped(new Date(), 'still here'));
    await pod('late', { [STACK]: stackId, 'brokkr.io/stream-logs': 'true' });
    await running('late', ['app']);
    await eventually(async () => (await lines()).some((l) => l.line === 'still here'), { timeoutMs: 60_000, what: "the late pod's line" });
  });
});

/**
 * Brokkr's `ws-telemetry` e2e scenario with the agent's real main, on a cluster
 * where pods run: what the agent applied for a stack, and the hub's GET /stacks/{id}/events must
 * show what the cluster said about it. Unlike Brokkr's scenario the stack is targeted by the agent
 * (only then may it write there), and the Pod's trouble is one the scheduler reports (no node
 * fits) rather than an image pull, which needs a kubelet.
 */
describe('agent telemetry (the agent process)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `tel-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeCluster;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess | undefined;

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    agent = await registerAgent(hub.admin);
  });
  after(async () => {
    await proc?.stop();
    await Promise.allSettled([hub?.stop(), kube?.stop()]);
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(proc?.output().slice(-6000));
  });

  it('streams the events about the objects it applied (a Deployment scaled, a Pod no node fits) over its live channel to GET /stacks/{id}/events', async () => {
    const stackId = await createStack(hub.admin);
    await target(hub.admin, agent.id, stackId);
    proc = await spawnAgent(hub.url, agent, kube.kubeconfigPath);
    await eventually(
      async () =>
        (await hub.admin.get('/admin/ws/connections')).body.connections.some((c: { agent_id: string }) => c.agent_id === agent.id),
      { timeoutMs: 60_000, what: 'the agent on its live channel' },
    );
    await deploy(
      hub.admin,
      stackId,
      `apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.27}]}
---
apiVersion: v1
kind: Pod
metadata: {name: unplaceable, namespace: ${ns}}
spec:
  nodeSelector: {brokkr.test/pool: none}
  containers: [{name: app, image: busybox:1.36}]
`,
    );
    const found = await eventually(
      async () => {
        const events = await storedEvents(hub, stackId);
        const scaled = events.find((e) => e.involved_object.kind === 'Deployment' && e.reason === 'ScalingReplicaSet');
        const unscheduled = events.find((e) => e.involved_object.name === 'unplaceable' && e.reason === 'FailedScheduling');
        return scaled && unscheduled ? { scaled, unscheduled } : undefined;
      },
      { timeoutMs: 90_000, what: 'the events in GET /stacks/{id}/events' },
    );
    expect(found.scaled).to.deep.include({ event_type: 'Normal', source: 'deployment-controller' });
    expect(found.scaled.involved_object.name).to.equal('web');
    expect(found.unscheduled.event_type).to.equal('Warning');
    expect(found.unscheduled.message).to.match(/didn't match Pod's node affinity\/selector/);
  });
});
