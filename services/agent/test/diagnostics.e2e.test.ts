import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { DiagnosticEventInfo, DiagnosticPodStatus, DiagnosticWithResult } from '@brokkr/contracts';
import { eventually, startKubeApiServer, useTestInfra, type KubeApiServer } from '@brokkr/testkit';
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
`;

/**
 * Diagnostics end to end: the real api (Postgres + NATS), the agent's real main and a real
 * kube-apiserver. There is no kubelet or controller here: the test creates the ReplicaSet and the
 * pods, writes pod status through the status subresource, and writes the Events the kubelet and
 * controllers would. Log tails need a kubelet, so the apiserver refuses them: the result must say
 * so per container (`Error: …`), cleanly, next to the collected statuses and events.
 */
describe('diagnostics (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const ns = `diag-${randomBytes(3).toString('hex')}`;
  let hub: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  let agent: RegisteredAgent;
  const procs: RunningAgentProcess[] = [];
  let objectId: string;

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
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

  interface TestEvent {
    name: string;
    about: Record<string, string>;
    reason: string;
    message: string;
    last: string;
  }

  async function event({ name, about, reason, message, last }: TestEvent) {
    await kubectl.create(`/api/v1/namespaces/${ns}/events`, {
      metadata: { name },
      involvedObject: { namespace: ns, ...about },
      reason,
      message,
      type: reason === 'BackOff' ? 'Warning' : 'Normal',
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: last,
      count: 2,
      source: { component: 'e2e' },
    });
  }

  it("collects the object's pods (owner chain and label), their events and a log-tail error per container", async () => {
    // Play the Deployment controller and the kubelet.
    const web = await kubectl.get(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    const rs = await kubectl.create(`/apis/apps/v1/namespaces/${ns}/replicasets`, {
      metadata: {
        name: 'web-1',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: web.metadata.uid, controller: true }],
      },
      spec: { selector: { matchLabels: { app: 'web' } }, template: web.spec.template },
    });
    const owned = await kubectl.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: {
        name: 'web-1-abc',
        labels: { app: 'web' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: rs.metadata.uid, controller: true }],
      },
      // Bound to a node (as the scheduler would) that runs no kubelet: the apiserver cannot fetch its logs.
      spec: {
        nodeName: 'node-1',
        containers: [
          { name: 'app', image: 'nginx:1.27' },
          { name: 'sidecar', image: 'busybox:1.36' },
        ],
      },
    });
    await kubectl.mergePatch(`/api/v1/namespaces/${ns}/pods/web-1-abc/status`, {
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [sidecar]' },
        ],
        containerStatuses: [
          {
            name: 'app',
            ready: true,
            restartCount: 0,
            image: 'nginx:1.27',
            imageID: '',
            state: { running: { startedAt: '2026-01-15T10:00:00Z' } },
          },
          {
            name: 'sidecar',
            ready: false,
            restartCount: 4,
            image: 'busybox:1.36',
            imageID: '',
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
          },
        ],
      },
    });
    // A pod carrying the object's id itself (as a bare Pod the agent applied would), never scheduled: no status.
    await kubectl.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'bare', labels: { 'brokkr.io/deployment-object-id': objectId } },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    });
    // Someone else's pod in the same namespace: not part of the result, nor are its events.
    const other = await kubectl.create(`/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'other' },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
    });
    const last = (minute: string) => `2026-01-15T10:${minute}Z`;
    await event({
      name: 'web-1-abc.backoff',
      about: { kind: 'Pod', name: 'web-1-abc', uid: owned.metadata.uid },
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      last: last('05:00'),
    });
    await event({
      name: 'web-1.create',
      about: { kind: 'ReplicaSet', name: 'web-1', uid: rs.metadata.uid },
      reason: 'SuccessfulCreate',
      message: 'Created pod: web-1-abc',
      last: last('01:00'),
    });
    await event({
      name: 'web.scale',
      about: { kind: 'Deployment', name: 'web' },
      reason: 'ScalingReplicaSet',
      message: 'Scaled up replica set web-1 to 1',
      last: last('00:30'),
    });
    await event({
      name: 'other.pull',
      about: { kind: 'Pod', name: 'other', uid: other.metadata.uid },
      reason: 'Pulled',
      message: 'not ours',
      last: last('09:00'),
    });

    const { request, result } = await completed(await requestDiagnostics());
    expect(request).to.include({ agent_id: agent.id, deployment_object_id: objectId, requested_by: 'e2e' });
    expect(result).to.not.equal(null);

    const pods = JSON.parse(result!.pod_statuses) as DiagnosticPodStatus[];
    expect(pods.map((p) => p.name).sort()).to.deep.equal(['bare', 'web-1-abc']);
    const web1 = pods.find((p) => p.name === 'web-1-abc')!;
    expect(web1).to.deep.include({ namespace: ns, phase: 'Running' });
    expect(web1.conditions).to.deep.equal([
      { condition_type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [sidecar]' },
    ]);
    expect(web1.containers).to.deep.equal([
      {
        name: 'app',
        ready: true,
        restart_count: 0,
        state: 'Running',
        state_reason: null,
        state_message: 'Started at 2026-01-15 10:00:00 UTC',
      },
      {
        name: 'sidecar',
        ready: false,
        restart_count: 4,
        state: 'Waiting',
        state_reason: 'CrashLoopBackOff',
        state_message: 'back-off 40s restarting failed container',
      },
    ]);
    const bare = pods.find((p) => p.name === 'bare')!;
    expect(bare.phase).to.equal('Pending');
    expect(bare.containers).to.deep.equal([
      { name: 'main', ready: false, restart_count: 0, state: 'Unknown', state_reason: null, state_message: null },
    ]);

    const events = JSON.parse(result!.events) as DiagnosticEventInfo[];
    expect(events.map((e) => [e.involved_object_kind, e.involved_object, e.reason])).to.deep.equal([
      ['Pod', 'web-1-abc', 'BackOff'],
      ['ReplicaSet', 'web-1', 'SuccessfulCreate'],
      ['Deployment', 'web', 'ScalingReplicaSet'],
    ]);
    expect(events[0]).to.deep.include({ event_type: 'Warning', message: 'Back-off restarting failed container', count: 2 });
    expect(events[0]!.last_timestamp).to.equal('2026-01-15T10:05:00Z');

    // No kubelet: every container's tail is an error, reported per container, nothing else lost.
    const tails = JSON.parse(result!.log_tails!) as Record<string, string>;
    expect(Object.keys(tails).sort()).to.deep.equal(['bare/main', 'web-1-abc/app', 'web-1-abc/sidecar']);
    expect(tails['bare/main']).to.equal('Error: the pod is not scheduled to a node yet, so no container has logged');
    for (const key of ['web-1-abc/app', 'web-1-abc/sidecar'])
      expect(tails[key], key).to.match(/^Error: GET \/api\/v1\/namespaces\/.+\/log → \d{3}/);
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
