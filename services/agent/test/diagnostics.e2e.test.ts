import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { DiagnosticEventInfo, DiagnosticPodStatus, DiagnosticWithResult } from '@brokkr/contracts';
import { eventually, startKubeCluster, useTestInfra, type KubeCluster } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { createStack, registerAgent, startBroker, target, type Broker, type RegisteredAgent } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';

const manifest = (ns: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: nginx:1.27
        - name: sidecar
          image: busybox:1.36
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: crashing
  namespace: ${ns}
spec:
  replicas: 1
  selector:
    matchLabels: {app: crashing}
  template:
    metadata:
      labels: {app: crashing}
    spec:
      containers:
        - name: app
          image: busybox:crashloop
---
apiVersion: v1
kind: Pod
metadata:
  name: bare
  namespace: ${ns}
spec:
  nodeSelector: {brokkr.test/pool: none}
  containers:
    - name: main
      image: busybox:1.36
`;

interface Pod {
  metadata: { name: string };
  status: {
    conditions?: { type: string; status: string; reason?: string }[];
    containerStatuses?: { state?: { waiting?: { reason?: string } } }[];
  };
}

interface ClusterEvent {
  reason: string;
  involvedObject: { kind: string; name: string };
}

/**
 * Diagnostics end to end: the real api (Postgres + NATS), the agent's real main and a cluster where
 * pods run (controllers, scheduler, KWOK's simulated nodes). The object's Deployments get their
 * pods from the controllers: one Ready, one crash-looping (an image tagged `:crashloop`); its bare
 * Pod asks for a node nobody has and stays Pending. The events are the controllers' and the
 * scheduler's own. The log tails come through the apiserver's log proxy from KWOK's node server,
 * which serves the cluster's log file as every scheduled container's log; a pod no node runs has
 * none, and the result says so per container, next to the statuses and events.
 */
describe('diagnostics (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `diag-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let agent: RegisteredAgent;
  const procs: RunningAgentProcess[] = [];
  let objectId: string;

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    kubectl = new Kubectl(kube);
    agent = await registerAgent(hub.admin);
    const stack = await createStack(hub.admin);
    await target(hub.admin, agent.id, stack);
    const created = await hub.admin.post(`/stacks/${stack}/deployment-objects`, { yaml_content: manifest(ns) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    objectId = created.body.id;
    procs.push(await spawnAgent(hub.url, agent, kube.kubeconfigPath));
    await eventually(async () => !!(await kubectl.get(`/apis/apps/v1/namespaces/${ns}/deployments/web`)), {
      what: 'the deployment applied',
    });
  });

  after(async () => {
    await Promise.allSettled(procs.map((p) => p.stop()));
    await Promise.allSettled([hub?.stop(), kube?.stop(), kubectl?.close()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(procs.map((p) => p.output().slice(-6000)).join('\n----\n'));
  });

  async function requestDiagnostics(): Promise<string> {
    const res = await hub.admin.post(`/deployment-objects/${objectId}/diagnostics`, { agent_id: agent.id, requested_by: 'e2e' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id;
  }

  async function completed(id: string): Promise<DiagnosticWithResult> {
    return eventually(
      async () => {
        const res = await hub.admin.get<DiagnosticWithResult>(`/diagnostics/${id}`);
        return res.body.request.status === 'completed' ? res.body : undefined;
      },
      { timeoutMs: 60_000, what: `diagnostic ${id} completed` },
    );
  }

  const pods = async () => (await kubectl.get<{ items: Pod[] }>(`/api/v1/namespaces/${ns}/pods`))!.items;
  const podNamed = (all: Pod[], prefix: string) => all.find((p) => p.metadata.name.startsWith(prefix));
  const clusterEvents = async () => (await kubectl.get<{ items: ClusterEvent[] }>(`/api/v1/namespaces/${ns}/events`))!.items;
  const has = (events: ClusterEvent[], kind: string, prefix: string, reason: string) =>
    events.some((e) => e.involvedObject.kind === kind && e.involvedObject.name.startsWith(prefix) && e.reason === reason);

  /** The pods got there: web Ready, crashing in CrashLoopBackOff, bare unschedulable. */
  async function podsSettled(): Promise<boolean> {
    const all = await pods();
    const condition = (prefix: string, type: string) => podNamed(all, prefix)?.status.conditions?.find((c) => c.type === type);
    return (
      condition('web-', 'Ready')?.status === 'True' &&
      podNamed(all, 'crashing-')?.status.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' &&
      condition('bare', 'PodScheduled')?.reason === 'Unschedulable'
    );
  }

  /** The controllers and the scheduler have written their events about all of it, `other` included. */
  async function eventsSettled(): Promise<boolean> {
    const events = await clusterEvents();
    const app = (name: string) =>
      has(events, 'Deployment', name, 'ScalingReplicaSet') &&
      has(events, 'ReplicaSet', `${name}-`, 'SuccessfulCreate') &&
      has(events, 'Pod', `${name}-`, 'Scheduled');
    return app('web') && app('crashing') && has(events, 'Pod', 'bare', 'FailedScheduling') && has(events, 'Pod', 'other', 'Scheduled');
  }

  it("collects the object's pods (owner chain and label), the cluster's events about them and each container's log tail", async () => {
    await kube.appendPodLog('listening on :8080');
    // Someone else's pod in the same namespace: scheduled and running, but not part of the result, nor are its events.
    await kubectl.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'other' },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    });
    await eventually(async () => (await podsSettled()) && (await eventsSettled()), {
      timeoutMs: 60_000,
      what: 'the pods running (or not) and the events of the cluster',
    });
    const live = await pods();
    const webPod = podNamed(live, 'web-')!.metadata.name;
    const crashingPod = podNamed(live, 'crashing-')!.metadata.name;

    const { request, result } = await completed(await requestDiagnostics());
    expect(request).to.include({ agent_id: agent.id, deployment_object_id: objectId, requested_by: 'e2e' });
    expect(result).to.not.equal(null);

    const collected = JSON.parse(result!.pod_statuses) as DiagnosticPodStatus[];
    expect(collected.map((p) => p.name).sort()).to.deep.equal(['bare', crashingPod, webPod].sort());
    const web = collected.find((p) => p.name === webPod)!;
    expect(web).to.deep.include({ namespace: ns, phase: 'Running' });
    expect(web.conditions.find((c) => c.condition_type === 'Ready')).to.deep.include({ status: 'True' });
    expect(web.containers.map((c) => [c.name, c.ready, c.restart_count, c.state])).to.deep.equal([
      ['app', true, 0, 'Running'],
      ['sidecar', true, 0, 'Running'],
    ]);
    expect(web.containers[0]!.state_message).to.match(/^Started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const crashing = collected.find((p) => p.name === crashingPod)!;
    expect(crashing.phase).to.equal('Running');
    expect(crashing.conditions.find((c) => c.condition_type === 'Ready')).to.deep.include({
      status: 'False',
      reason: 'ContainersNotReady',
    });
    expect(crashing.containers).to.deep.equal([
      {
        name: 'app',
        ready: false,
        restart_count: 3,
        state: 'Waiting',
        state_reason: 'CrashLoopBackOff',
        state_message: 'back-off 40s restarting failed container',
      },
    ]);
    const bare = collected.find((p) => p.name === 'bare')!;
    expect(bare.phase).to.equal('Pending');
    expect(bare.conditions).to.have.length(1);
    expect(bare.conditions[0]).to.deep.include({ condition_type: 'PodScheduled', status: 'False', reason: 'Unschedulable' });
    expect(bare.containers).to.deep.equal([
      { name: 'main', ready: false, restart_count: 0, state: 'Unknown', state_reason: null, state_message: null },
    ]);

    // The controllers' events (core/v1, lastTimestamp) and the scheduler's (events.k8s.io, eventTime only); none about `other`.
    const events = JSON.parse(result!.events) as DiagnosticEventInfo[];
    const owner = (name: string) => name.replace(/-[a-z0-9]+(-[a-z0-9]+)?$/, '');
    expect(events.map((e) => `${e.involved_object_kind} ${owner(e.involved_object)} ${e.reason}`).sort()).to.deep.equal([
      'Deployment crashing ScalingReplicaSet',
      'Deployment web ScalingReplicaSet',
      'Pod bare FailedScheduling',
      'Pod crashing Scheduled',
      'Pod web Scheduled',
      'ReplicaSet crashing SuccessfulCreate',
      'ReplicaSet web SuccessfulCreate',
    ]);
    const times = events.map((e) => Date.parse(e.last_timestamp ?? ''));
    expect(times, 'newest first').to.deep.equal([...times].sort((a, b) => b - a));
    const scaled = events.find((e) => e.reason === 'ScalingReplicaSet' && e.involved_object === 'web')!;
    expect(scaled).to.deep.include({ event_type: 'Normal', count: 1 });
    expect(scaled.message).to.match(/^Scaled up replica set web-[a-z0-9]+ from 0 to 1$/);
    const unschedulable = events.find((e) => e.reason === 'FailedScheduling')!;
    expect(unschedulable).to.deep.include({ event_type: 'Warning', involved_object: 'bare' });
    expect(unschedulable.message).to.match(/didn't match Pod's node affinity\/selector/);
    expect(unschedulable.last_timestamp, 'the scheduler writes eventTime only').to.be.a('string');

    // Every container of the object has a tail: the scheduled ones what the node served, the others why not.
    const tails = JSON.parse(result!.log_tails!) as Record<string, string>;
    const scheduled = [`${crashingPod}/app`, `${webPod}/app`, `${webPod}/sidecar`];
    expect(Object.keys(tails).sort()).to.deep.equal(['bare/main', ...scheduled].sort());
    expect(tails['bare/main']).to.equal('Error: the pod is not scheduled to a node yet, so no container has logged');
    // (KWOK serves the file for the crash-looping container too, as a kubelet serves its last run's log.)
    for (const key of scheduled) expect(tails[key], key).to.include('listening on :8080');
  });

  it('two agent processes with the same identity never collect the same request', async () => {
    procs.push(await spawnAgent(hub.url, agent, kube.kubeconfigPath));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await requestDiagnostics());
    for (const id of ids) expect((await completed(id)).result).to.not.equal(null);
    const collecting = (id: string) =>
      procs
        .flatMap((p) => p.output().split('\n'))
        .filter((line) => line.includes('"diagnostic request claimed; collecting"') && line.includes(id)).length;
    // A child's stdout reaches us through a pipe, maybe after the result it posted: wait for the lines, then count them.
    await eventually(() => ids.every((id) => collecting(id) >= 1), { what: "every request's collecting line" });
    for (const id of ids) expect(collecting(id), id).to.equal(1);
    // A result cannot be posted twice either: the broker refuses a request that is no longer claimed.
    const again = await agent.client.post(`/diagnostics/${ids[0]}/result`, {
      pod_statuses: '[]',
      events: '[]',
      collected_at: new Date().toISOString(),
    });
    expect([again.status, again.body.code]).to.deep.equal([409, 'diagnostic_not_claimed']);
  });
});
