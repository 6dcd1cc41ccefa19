import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { expect } from 'chai';
import { eventually, startKubeCluster, useTestInfra, type KubeCluster } from '@brokkr/testkit';
import type { KubeClient } from '../src/kube/client.ts';
import { connectKubernetes } from '../src/runtime/startup.ts';
import { createStack, deploy, registerAgent, startBroker, target, type Broker, type RegisteredAgent } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { InProcessClusterEvents } from './support/cluster-events.ts';
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
interface KubePod {
  metadata: { name: string };
  status: { containerStatuses?: { containerID?: string; state: { running?: unknown } }[] };
}
interface ClusterEvent {
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; uid: string };
}

const storedEvents = async (hub: Broker, stackId: string) =>
  (await hub.admin.get(`/stacks/${stackId}/events`)).body.events as StoredEvent[];

/**
 * A one-replica Deployment; `stackId` marks it and its pod template (so its ReplicaSets and pods
 * carry the marker too), and so do the other `annotations`.
 */
function deployment(name: string, stackId?: string, more: Record<string, string> = {}) {
  const annotations = { ...(stackId ? { [STACK]: stackId } : {}), ...more };
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
describe('agent cluster events: the cluster’s own Kubernetes events (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `tel-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let client: KubeClient;
  let stackId: string;
  let streamers: InProcessClusterEvents;

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
    streamers = new InProcessClusterEvents({ hubUrl: hub.url, agent, kube, client, stateNamespace: ns });
    await streamers.start();
  });
  after(async () => {
    await streamers?.stop();
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
    await streamers.stop();
    // While the agent is away: web scales up; the controllers and the scheduler say so.
    await scale(2);
    await webEventsWhen(2);
    await streamers.start();
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
 * The log streamer end to end, on a cluster where pods run: the pods are the Deployment
 * controller's, KWOK runs them (a running container has a containerID, which the streamer keys its
 * tails by) and its node server, each node's kubelet endpoint, serves the cluster's one log file as
 * every container's log, followed while it grows; the agent reads it through the apiserver's
 * pod-log proxy. Every container "prints" every line appended to that file, so each test appends
 * lines of its own and reads what the hub stored per Deployment (its pods' names start with its
 * name).
 */
describe('agent cluster events: pod logs through the apiserver from the nodes (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `tel-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let client: KubeClient;
  let stackId: string;
  let streamers: InProcessClusterEvents;

  const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
  const streamsLogs = { 'brokkr.io/stream-logs': 'true' };
  const lines = async () => (await hub.admin.get(`/stacks/${stackId}/logs`, { query: { limit: '5000' } })).body.lines as StoredLine[];
  /** What the hub stored from the pods of one Deployment, newest first. */
  const linesOf = async (name: string) => (await lines()).filter((l) => l.pod.startsWith(`${name}-`));
  const storedFrom = async (name: string, line: string) => (await linesOf(name)).some((l) => l.line === line);
  /** The Deployment's pod once KWOK runs its container. */
  const runningPod = (name: string) =>
    eventually(
      async () => {
        const pods = (await kubectl.get<{ items: KubePod[] }>(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3D${name}`))!.items;
        return pods.find((p) => p.status.containerStatuses?.some((c) => c.containerID && c.state.running))?.metadata.name;
      },
      { timeoutMs: 60_000, what: `a running ${name} pod` },
    );
  /** The time the container runtime wrote a line with (`<RFC 3339> stdout F <text>` in the cluster's log file). */
  const writtenAt = async (text: string) => {
    const entry = (await fs.readFile(kube.podLogFile, 'utf8')).split('\n').find((l) => l.endsWith(` stdout F ${text}`))!;
    return new Date(entry.slice(0, entry.indexOf(' '))).toISOString();
  };

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    kubectl = new Kubectl(kube);
    await kubectl.create('/api/v1/namespaces', { metadata: { name: ns } });
    ({ kube: client } = await connectKubernetes(kube.kubeconfigPath, 8));
    const agent = await registerAgent(hub.admin);
    stackId = await createStack(hub.admin);
    await target(hub.admin, agent.id, stackId);
    streamers = new InProcessClusterEvents({ hubUrl: hub.url, agent, kube, client, stateNamespace: ns });
    await streamers.start();
  });
  after(async () => {
    await streamers?.stop();
    await client?.close();
    await kubectl?.close();
    await Promise.allSettled([hub?.stop(), kube?.stop()]);
  });

  it('streams and follows the log lines of a pod that opts in (brokkr.io/stream-logs: "true"), and none of one that does not', async () => {
    await kubectl.create(deployments, deployment('quiet', stackId));
    await runningPod('quiet');
    // quiet's running pod reached the streamer before anything of chatty's (one watch, in order).
    await kube.appendPodLog('starting');
    await kubectl.create(deployments, deployment('chatty', stackId, streamsLogs));
    const pod = await runningPod('chatty');
    await eventually(() => storedFrom('chatty', 'starting'), { timeoutMs: 60_000, what: "chatty's first line" });
    // Followed: a line printed after the tail opened comes too.
    await kube.appendPodLog('listening on :8080');
    await eventually(() => storedFrom('chatty', 'listening on :8080'), { timeoutMs: 60_000, what: "chatty's next line" });

    const got = await linesOf('chatty');
    expect(got.map((l) => [l.pod, l.container, l.line])).to.deep.equal([
      [pod, 'app', 'listening on :8080'],
      [pod, 'app', 'starting'],
    ]);
    // Each line keeps the time the container runtime wrote it with, not when the agent read it.
    for (const l of got) expect(l.ts).to.equal(await writtenAt(l.line));
    expect(await linesOf('quiet')).to.deep.equal([]);
  });

  it('after a restart, resumes each tail from its cursor: nothing already sent is sent again, what came meanwhile is sent once', async () => {
    await streamers.stop();
    // While the agent is away, the pod prints more.
    await kube.appendPodLog('request served');
    await streamers.start();

    await eventually(() => storedFrom('chatty', 'request served'), { timeoutMs: 60_000, what: 'the new line' });
    expect((await linesOf('chatty')).map((l) => l.line)).to.deep.equal(['request served', 'listening on :8080', 'starting']);
  });

  it('a pod deleted while its log is followed: its tail is closed and the streamer carries on', async () => {
    const gone = await runningPod('chatty');
    expect((await kubectl.call('DELETE', `/api/v1/namespaces/${ns}/pods/${gone}?gracePeriodSeconds=0`)).status).to.equal(200);
    await eventually(async () => (await kubectl.get(`/api/v1/namespaces/${ns}/pods/${gone}`)) === undefined, { what: `${gone} gone` });
    // A pod made now reaches the streamer after the deletion (one watch, in order); once its tail
    // sends, the deleted pod's tail has been closed.
    await kubectl.create(deployments, deployment('late', stackId, streamsLogs));
    await eventually(() => storedFrom('late', 'starting'), { timeoutMs: 60_000, what: "the late pod's log from its start" });
    await kube.appendPodLog('still here');
    await eventually(() => storedFrom('late', 'still here'), { timeoutMs: 60_000, what: "the late pod's new line" });
    // chatty's replacement (another pod, another tail) reads it too; the deleted pod's closed tail does not.
    await eventually(async () => (await linesOf('chatty')).some((l) => l.line === 'still here' && l.pod !== gone), {
      timeoutMs: 60_000,
      what: "chatty's replacement's new line",
    });
    expect((await lines()).filter((l) => l.pod === gone).map((l) => l.line)).to.not.include('still here');
  });
});

/**
 * Brokkr's `ws-telemetry` e2e scenario with the agent's real main, on a cluster
 * where pods run: what the agent applied for a stack, and the hub's GET /stacks/{id}/events must
 * show what the cluster said about it. Unlike Brokkr's scenario the stack is targeted by the agent
 * (only then may it write there), and the Pod's trouble is one the scheduler reports (no node
 * fits) rather than an image pull, which needs a kubelet.
 */
describe('agent cluster events (the agent process)', function () {
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
