import { expect } from 'chai';
import { eventually, startKubeCluster, useTestInfra, type KubeCluster } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import {
  agentEvents,
  createStack,
  deploy,
  registerAgent,
  startBroker,
  target,
  type Broker,
  type DeploymentObject,
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap, deployment, stream } from './support/manifests.ts';

interface Meta {
  metadata: { creationTimestamp: string; resourceVersion: string; deletionTimestamp?: string };
}
interface Pod extends Meta {
  spec: { containers: { image: string }[] };
  status?: { conditions?: { type: string; status: string; lastTransitionTime: string }[] };
}

/**
 * In-stack waves end to end (reconcile/waves.ts, docs/dependencies.md "In-stack waves"), on one
 * cluster where pods run (controllers, scheduler, KWOK; an image tagged `:never-ready` runs but is
 * never Ready, one tagged `:crashloop` crash-loops): wave 1 of a stack is held back while wave 0's
 * Deployment is not Ready and the stack fails naming the wave at the (shortened) deadline; once
 * wave 0's pods are Ready wave 1 follows; a crash-looping wave fails at once; a bad annotation
 * applies nothing; deleting the stack deletes wave 1 before wave 0.
 */
describe('agent in-stack waves (end to end, pods from controllers and KWOK)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  const NS = 'default';
  const HOLD = 'test.brokkr.io/hold';
  let broker: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess | undefined;
  let stackId: string;

  /** The top-level metadata of a manifest document gets the wave annotation (the pod template's is left alone). */
  const waved = (yaml: string, wave: number) => yaml.replace(/^metadata:\n/m, `metadata:\n  annotations: {brokkr.io/wave: "${wave}"}\n`);
  const manifest = (image: string) =>
    stream(
      waved(configMap(NS, 'app', { wave: '1' }), 1),
      waved(deployment(NS, 'db', image), 0),
      waved(configMap(NS, 'db-settings', { wave: '0' }), 0),
    );
  const eventFor = (d: DeploymentObject, status: string, type?: string) =>
    eventually(
      async () =>
        (await agentEvents(broker.admin, agent.id)).find(
          (e) => e.deployment_object_id === d.id && e.status === status && (!type || e.event_type === type),
        ),
      { timeoutMs: 120_000, what: `a ${status} event for ${d.id}` },
    );
  const configMapPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeCluster({ nodes: 1 })]);
    kubectl = new Kubectl(kube);
    agent = await registerAgent(broker.admin);
    stackId = await createStack(broker.admin);
    await target(broker.admin, agent.id, stackId);
    proc = await spawnAgent(broker.url, agent, kube.kubeconfigPath, {
      // A grace longer than the deadline: a never-Ready pod stays "not yet" (not degraded) until the wave runs out of time.
      env: { BROKKR__AGENT__WAVE_HEALTH_TIMEOUT_SECONDS: '10', BROKKR__AGENT__READINESS_GRACE_SECONDS: '600' },
    });
  });

  after(async () => {
    await proc?.stop();
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-8000));
  });

  it('holds wave 1 back while wave 0’s pods are never Ready, and fails the stack naming the wave at the deadline', async () => {
    const bystander = await createStack(broker.admin);
    await target(broker.admin, agent.id, bystander);
    const d = await deploy(broker.admin, stackId, manifest('demo/db:never-ready'));
    const other = await deploy(broker.admin, bystander, configMap(NS, 'bystander', { any: 'thing' }));
    const failure = await eventFor(d, 'FAILURE');
    expect(failure.message).to.match(/^wave 0 not healthy within 10 s; later waves were not applied:/);
    // The waiting stack did not hold the agent's pass: a stack deployed after it was applied meanwhile.
    const applied = await eventFor(other, 'SUCCESS');
    expect(new Date(applied.created_at).getTime()).to.be.below(new Date(failure.created_at).getTime());
    expect(failure.message).to.contain(`Deployment '${NS}/db': 0/1 pods ready`);
    expect(await kubectl.get(`/apis/apps/v1/namespaces/${NS}/deployments/db`)).to.not.equal(undefined);
    expect(await kubectl.get(configMapPath('db-settings'))).to.not.equal(undefined);
    expect(await kubectl.get(configMapPath('app'))).to.equal(undefined);
  });

  it('applies wave 1 once wave 0’s pods are Ready, and only then reports SUCCESS', async () => {
    const d = await deploy(broker.admin, stackId, manifest('demo/db:1'));
    await eventFor(d, 'SUCCESS');
    const app = await kubectl.get<Meta>(configMapPath('app'));
    expect(app, 'wave 1 applied').to.not.equal(undefined);
    const pods = (await kubectl.get<{ items: Pod[] }>(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Ddb`))!.items;
    const readyAt = pods
      .filter((p) => p.spec.containers[0]?.image === 'demo/db:1')
      .flatMap((p) => p.status?.conditions?.filter((c) => c.type === 'Ready' && c.status === 'True') ?? [])
      .map((c) => new Date(c.lastTransitionTime).getTime());
    expect(readyAt, 'a Ready pod of wave 0').to.have.length(1);
    expect(new Date(app!.metadata.creationTimestamp).getTime()).to.be.at.least(readyAt[0]!);
  });

  it('fails a stack at once, naming the wave, when a pod of the wave crash-loops: later waves are not applied', async () => {
    const other = await createStack(broker.admin);
    await target(broker.admin, agent.id, other);
    const yaml = stream(waved(configMap(NS, 'api-config', { wave: '2' }), 2), waved(deployment(NS, 'api', 'demo/api:crashloop'), -1));
    const failure = await eventFor(await deploy(broker.admin, other, yaml), 'FAILURE');
    expect(failure.message).to.match(/^wave -1 failed; later waves were not applied:/);
    expect(failure.message).to.contain(`Deployment '${NS}/api': degraded (CrashLoopBackOff`);
    expect(await kubectl.get(configMapPath('api-config'))).to.equal(undefined);
  });

  it('refuses a wave that is not an integer with a FAILURE naming the object, and applies nothing', async () => {
    const other = await createStack(broker.admin);
    await target(broker.admin, agent.id, other);
    const yaml = stream(
      waved(configMap(NS, 'first', { wave: '0' }), 0),
      waved(configMap(NS, 'second', { wave: 'soon' }), 1).replace('"1"', '"soon"'),
    );
    const failure = await eventFor(await deploy(broker.admin, other, yaml), 'FAILURE');
    expect(failure.message).to.contain(`ConfigMap '${NS}/second': annotation brokkr.io/wave must be an integer, not "soon"`);
    expect(await kubectl.get(configMapPath('first'))).to.equal(undefined);
  });

  it('deletes the stack highest wave first: wave 1 is marked deleted before wave 0', async () => {
    // Held by a finalizer, each ConfigMap keeps the resourceVersion of the write that marked it
    // deleted (nothing else writes ConfigMaps), which orders the two deletions.
    for (const name of ['app', 'db-settings']) await kubectl.mergePatch(configMapPath(name), { metadata: { finalizers: [HOLD] } });
    const marker = await deploy(broker.admin, stackId, '', true);
    await eventFor(marker, 'SUCCESS', 'DELETED');
    const [app, settings] = await Promise.all(['app', 'db-settings'].map((name) => kubectl.get<Meta>(configMapPath(name))));
    expect(app?.metadata.deletionTimestamp, 'wave 1 deleted').to.be.a('string');
    expect(settings?.metadata.deletionTimestamp, 'wave 0 deleted').to.be.a('string');
    expect(BigInt(app!.metadata.resourceVersion) < BigInt(settings!.metadata.resourceVersion)).to.equal(true);
    for (const name of ['app', 'db-settings']) await kubectl.mergePatch(configMapPath(name), { metadata: { finalizers: null } });
    await eventually(async () => (await kubectl.get(configMapPath('app'))) === undefined, { what: 'the ConfigMap gone' });
  });
});
