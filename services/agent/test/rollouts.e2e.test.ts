import { expect } from 'chai';
import { parse } from 'yaml';
import { eventually, freePort, spawnService, startKubeCluster, useTestInfra, type KubeCluster, type RunningService } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import {
  adminGeneratorId,
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
import { configMap, crd, deployment, stream, widget } from './support/manifests.ts';

interface Meta {
  metadata: { creationTimestamp: string; resourceVersion: string; deletionTimestamp?: string };
}
interface Pod extends Meta {
  spec: { containers: { image: string }[] };
  status?: { conditions?: { type: string; status: string; lastTransitionTime: string }[] };
}

interface Cluster {
  kube: KubeCluster;
  kubectl: Kubectl;
  agent: RegisteredAgent;
  proc?: RunningAgentProcess;
}

/**
 * Progressive rollouts end to end: three of our agents, each against its own cluster where pods
 * run (controllers, scheduler, KWOK), the real api and maintenance. A two-wave rollout that
 * succeeds (with the maintenance replica killed -9 mid-rollout and replaced); one whose second wave
 * fails to apply and is rolled back automatically; one whose second wave applies but whose pods
 * never become Ready, rolled back by the health gate from pod readiness alone (the canary's
 * cluster runs every image Ready, the others honour `:never-ready`). Then an expiring preview
 * stack, removed from all three clusters when it expires; and a stack that depends on another
 * being healthy, served where that one is and held back where its pods never become Ready (the
 * same clusters: a file of its own would start three more); and reverse-order deletion: a stack
 * others depend on stays on the cluster while they are live, and goes after them. Last, in-stack
 * waves, by an agent of their own on one of these clusters (again: not a cluster of their own).
 */
describe('progressive rollouts, expiring stacks, dependencies between stacks and in-stack waves (end to end, three clusters)', function () {
  this.timeout(300_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let clusters: Cluster[];
  let maintenance: RunningService;
  let stackId: string;

  const NS = 'default';
  const POLICY = {
    waves: [
      { name: 'canary', selector: { labels: ['canary'] }, soak_seconds: 0 },
      // The soak outlasts the agents' readiness grace: a pod not Ready by then has been reported degraded.
      { name: 'everyone', percent: 100, soak_seconds: 8, progress_deadline_seconds: 30 },
    ],
    auto_rollback: true,
  };

  async function startMaintenance(): Promise<RunningService> {
    const port = await freePort();
    return spawnService({
      service: 'maintenance',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__HEALTH__PORT: String(port),
        BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: '1',
        BROKKR__MAINTENANCE__STACK_EXPIRY_INTERVAL_SECONDS: '1',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
  }

  const version = async (c: Cluster) =>
    (await c.kubectl.get<{ data: { version: string } }>(`/api/v1/namespaces/${NS}/configmaps/app`))?.data.version;

  async function latestRollout() {
    const res = await broker.admin.get(`/stacks/${stackId}/rollouts`);
    expect(res.status).to.equal(200);
    return res.body[0] as { id: string; status: string; released_wave: number; message: string | null } | undefined;
  }

  before(async () => {
    broker = await startBroker(infra);
    maintenance = await startMaintenance();
    const kubes = await Promise.all([
      startKubeCluster({ nodes: 1, failures: false }),
      startKubeCluster({ nodes: 1 }),
      startKubeCluster({ nodes: 1 }),
    ]);
    clusters = [];
    for (const kube of kubes) clusters.push({ kube, kubectl: new Kubectl(kube), agent: await registerAgent(broker.admin) });
    const canary = clusters[0]!.agent;
    expect((await broker.admin.post(`/agents/${canary.id}/labels`, { agent_id: canary.id, label: 'canary' })).status).to.equal(201);
    stackId = await createStack(broker.admin);
    for (const c of clusters) await target(broker.admin, c.agent.id, stackId);
    const first = clusters[0]!.kubectl;
    await first.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', parse(crd()));
    await eventually(async () => (await first.call('GET', '/apis/demo.brokkr.io/v1')).status === 200, { what: 'the Widget CRD' });
    for (const c of clusters) {
      c.proc = await spawnAgent(broker.url, c.agent, c.kube.kubeconfigPath, {
        env: {
          BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '5',
          BROKKR__AGENT__DEPLOYMENT_HEALTH_INTERVAL: '2',
          BROKKR__AGENT__DEPLOYMENT_HEALTH_CHECK_INTERVAL: '1',
          BROKKR__AGENT__READINESS_GRACE_SECONDS: '2',
        },
      });
    }
    await deploy(broker.admin, stackId, configMap(NS, 'app', { version: '1' }));
    await eventually(async () => (await Promise.all(clusters.map(version))).every((v) => v === '1'), { what: 'v1 on every cluster' });
    expect((await broker.admin.put(`/stacks/${stackId}/rollout-policy`, POLICY)).status).to.equal(200);
  });

  after(async () => {
    await Promise.allSettled((clusters ?? []).map((c) => c.proc?.stop()));
    await Promise.allSettled((clusters ?? []).map((c) => c.kubectl.close()));
    await Promise.allSettled([maintenance?.stop(), broker?.stop(), ...(clusters ?? []).map((c) => c.kube.stop())]);
  });

  it('rolls v2 out canary first, survives a maintenance replica killed -9 mid-rollout, and ends with v2 everywhere', async () => {
    await deploy(broker.admin, stackId, configMap(NS, 'app', { version: '2' }));
    await eventually(async () => (await version(clusters[0]!)) === '2', { what: 'v2 on the canary cluster' });
    // Whatever the second wave's state, it cannot be ahead of the canary's gate: kill maintenance
    // now and let a fresh replica carry on from the rows.
    const others = await Promise.all(clusters.slice(1).map(version));
    const rollout = await latestRollout();
    if (rollout?.released_wave === 0) expect(others).to.deep.equal(['1', '1']);
    maintenance.child.kill('SIGKILL');
    await maintenance.exited;
    maintenance = await startMaintenance();

    await eventually(async () => (await Promise.all(clusters.map(version))).every((v) => v === '2'), { what: 'v2 on every cluster' });
    await eventually(async () => (await latestRollout())?.status === 'succeeded', { what: 'the rollout to succeed' });
  });

  it('rolls back v3 automatically when the second wave fails to apply it: the canary cluster is back on v2', async () => {
    // The Widget kind exists only on the canary's cluster (installed before the agents started):
    // v3 applies there and fails elsewhere.
    const canary = clusters[0]!;
    await deploy(broker.admin, stackId, stream(configMap(NS, 'app', { version: '3' }), widget(NS, 'w', 3)));
    await eventually(async () => (await version(canary)) === '3', { what: 'v3 on the canary cluster' });
    await eventually(async () => (await latestRollout())?.status === 'rolled_back', { what: 'the automatic rollback' });
    expect((await latestRollout())?.message).to.match(/failed in wave "everyone"/);

    await eventually(async () => (await Promise.all(clusters.map(version))).every((v) => v === '2'), { what: 'v2 on every cluster again' });
    await eventually(async () => (await canary.kubectl.get(`/apis/demo.brokkr.io/v1/namespaces/${NS}/widgets/w`)) === undefined, {
      what: "the canary's Widget pruned with the rollback",
    });
  });

  it('rolls back v4 when the second wave applies it but its pods never become Ready: the health gate, not an apply failure', async () => {
    const [canary, ...rest] = clusters as [Cluster, ...Cluster[]];
    const v4 = await deploy(
      broker.admin,
      stackId,
      stream(configMap(NS, 'app', { version: '4' }), deployment(NS, 'web', 'demo/web:never-ready')),
    );
    // Every cluster of the second wave applied v4 and reported its pods NotReady.
    await eventually(
      async () => {
        const health = (await broker.admin.get(`/deployment-objects/${v4.id}/health`)).body as {
          health_records: { agent_id: string; status: string; summary: string }[];
        };
        return rest.every((c) =>
          health.health_records.some(
            (h) => h.agent_id === c.agent.id && h.status === 'degraded' && JSON.parse(h.summary).conditions.includes('NotReady'),
          ),
        );
      },
      { timeoutMs: 90_000, what: 'NotReady reports from the second wave' },
    );
    for (const c of [canary, ...rest]) {
      const mine = (await agentEvents(broker.admin, c.agent.id)).filter((e) => e.deployment_object_id === v4.id);
      expect(mine.map((e) => e.status)).to.include('SUCCESS');
      expect(mine.map((e) => e.status)).not.to.include('FAILURE');
    }
    await eventually(async () => (await latestRollout())?.status === 'rolled_back', { timeoutMs: 90_000, what: 'the automatic rollback' });
    expect((await latestRollout())?.message).to.match(/wave "everyone" was not applied and healthy within 30 s/);
    await eventually(async () => (await Promise.all(clusters.map(version))).every((v) => v === '2'), { what: 'v2 on every cluster again' });
    await eventually(
      async () =>
        (await Promise.all(clusters.map((c) => c.kubectl.get(`/apis/apps/v1/namespaces/${NS}/deployments/web`)))).every((d) => !d),
      { what: 'the never-ready Deployment pruned everywhere' },
    );
  });

  it('removes an expiring preview stack from every cluster when it expires', async () => {
    const res = await broker.admin.post('/stacks', {
      name: `preview-${Date.now()}`,
      generator_id: await adminGeneratorId(broker.admin),
      ttl_seconds: 20,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const preview = res.body.id as string;
    for (const c of clusters) await target(broker.admin, c.agent.id, preview);
    await deploy(broker.admin, preview, configMap(NS, 'preview', { pr: '1234' }));
    const present = (c: Cluster) => c.kubectl.get(`/api/v1/namespaces/${NS}/configmaps/preview`);
    await eventually(async () => (await Promise.all(clusters.map(present))).every((o) => o !== undefined), {
      what: 'the preview on every cluster',
    });
    await eventually(async () => (await Promise.all(clusters.map(present))).every((o) => o === undefined), {
      what: 'the preview removed from every cluster after its expiry',
      timeoutMs: 90_000,
    });
    expect((await broker.admin.get(`/stacks/${preview}`)).status).to.equal(404);
  });

  it('serves stack B, which waits for stack A to be healthy on the same agent, where A is healthy; elsewhere B waits on A (five polls) until A is', async () => {
    const [ready, slow] = clusters as [Cluster, Cluster, ...Cluster[]];
    const [a, b] = [await createStack(broker.admin), await createStack(broker.admin)];
    for (const c of [ready, slow]) for (const stack of [a, b]) await target(broker.admin, c.agent.id, stack);
    const dependency = await broker.admin.post(`/stacks/${b}/dependencies`, { stack_id: a, ready_when: 'healthy' });
    expect(dependency.status, JSON.stringify(dependency.body)).to.equal(201);
    const cycle = await broker.admin.post(`/stacks/${a}/dependencies`, { stack_id: b, ready_when: 'applied' });
    expect(cycle.status).to.equal(422);
    expect(cycle.body).to.deep.include({ code: 'dependency_cycle' });
    expect(cycle.body.details.cycle).to.deep.equal([a, b, a]);

    const neverReady = await deploy(broker.admin, a, deployment(NS, 'db', 'demo/db:never-ready'));
    await deploy(broker.admin, b, configMap(NS, 'app-b', { needs: 'db' }));
    const appB = (c: Cluster) => c.kubectl.get(`/api/v1/namespaces/${NS}/configmaps/app-b`);
    await eventually(async () => (await appB(ready)) !== undefined, { timeoutMs: 90_000, what: 'B on the cluster where A is healthy' });
    await eventually(
      async () => {
        const health = (await broker.admin.get(`/deployment-objects/${neverReady.id}/health`)).body as {
          health_records: { agent_id: string; status: string }[];
        };
        return health.health_records.some((h) => h.agent_id === slow.agent.id && h.status === 'degraded');
      },
      { timeoutMs: 90_000, what: 'A reported degraded where its pods never become Ready' },
    );
    for (let poll = 0; poll < 5; poll++) {
      const state = await slow.agent.client.get(`/agents/${slow.agent.id}/target-state?mode=full`);
      expect(state.status).to.equal(200);
      expect(
        state.body.map((o: { stack_id: string }) => o.stack_id),
        `poll ${poll + 1}`,
      )
        .to.include(a)
        .and.not.include(b);
    }
    expect(await appB(slow), 'B not on the cluster where A is degraded').to.equal(undefined);
    const waiting = await broker.admin.get(`/stacks/${b}/agents/${slow.agent.id}/status`);
    expect(waiting.body).to.deep.include({ state: 'waiting', reason: 'dependency', stack_id: a, ready_when: 'healthy' });
    expect((await broker.admin.get(`/stacks/${b}/agents/${ready.agent.id}/status`)).body).to.deep.include({ state: 'served' });

    await deploy(broker.admin, a, deployment(NS, 'db', 'demo/db:1'));
    await eventually(async () => (await appB(slow)) !== undefined, { timeoutMs: 90_000, what: 'B once A is healthy there too' });
    expect((await broker.admin.get(`/stacks/${b}/agents/${slow.agent.id}/status`)).body).to.deep.include({ state: 'served' });
  });

  it('removes stack B before stack A, which B depends on: A stays on the cluster while B is live, and goes only after B when both are deleted', async () => {
    const cluster = clusters[2]!;
    const [a, b] = [await createStack(broker.admin), await createStack(broker.admin)];
    for (const stack of [a, b]) await target(broker.admin, cluster.agent.id, stack);
    expect((await broker.admin.post(`/stacks/${b}/dependencies`, { stack_id: a, ready_when: 'applied' })).status).to.equal(201);
    await deploy(broker.admin, a, configMap(NS, 'order-a', { role: 'crds' }));
    await deploy(broker.admin, b, configMap(NS, 'order-b', { needs: 'a' }));
    const present = async (name: string) => (await cluster.kubectl.get(`/api/v1/namespaces/${NS}/configmaps/${name}`)) !== undefined;
    await eventually(async () => (await present('order-a')) && (await present('order-b')), {
      timeoutMs: 90_000,
      what: 'A and B on the cluster',
    });

    // A deleted alone while B is live: its deletion waits for B, and the cluster keeps A.
    expect((await broker.admin.delete(`/stacks/${a}`)).status).to.equal(204);
    const held = await broker.admin.get(`/stacks/${a}/agents/${cluster.agent.id}/status`);
    expect(held.body).to.deep.include({ state: 'waiting', reason: 'dependents', dependents: [b] });
    for (let poll = 0; poll < 3; poll++) {
      const state = await cluster.agent.client.get(`/agents/${cluster.agent.id}/target-state?mode=full`);
      const ofA = (state.body as { stack_id: string; is_deletion_marker: boolean }[]).find((o) => o.stack_id === a);
      expect(ofA?.is_deletion_marker, `poll ${poll + 1}`).to.equal(false);
    }
    expect(await present('order-a'), 'A kept while B is live').to.equal(true);

    // B deleted too: the agent removes B, and A only once B is gone.
    expect((await broker.admin.delete(`/stacks/${b}`)).status).to.equal(204);
    let aGoneFirst = false;
    await eventually(
      async () => {
        const [aThere, bThere] = [await present('order-a'), await present('order-b')];
        if (!aThere && bThere) aGoneFirst = true;
        return !aThere && !bThere;
      },
      { timeoutMs: 90_000, what: 'B and A removed from the cluster' },
    );
    expect(aGoneFirst, 'A removed while B was still there').to.equal(false);
  });

  /**
   * In-stack waves (reconcile/waves.ts, docs/dependencies.md "In-stack waves") on the third
   * cluster, where an image tagged `:never-ready` runs but is never Ready and one tagged
   * `:crashloop` crash-loops: wave 1 of a stack is held back while wave 0's Deployment is not Ready
   * and the stack fails naming the wave at the (shortened) deadline; once wave 0's pods are Ready
   * wave 1 follows; a crash-looping wave fails at once; a bad annotation applies nothing; deleting
   * the stack deletes wave 1 before wave 0. An agent of their own (its wave deadline and readiness
   * grace are not the rollout agents'), in a namespace of their own (their names are not the
   * rollout stacks').
   */
  describe('in-stack waves (an agent of their own on the third cluster)', () => {
    const NS = 'waves';
    const HOLD = 'test.brokkr.io/hold';
    let cluster: Cluster;
    let agent: RegisteredAgent;
    let proc: RunningAgentProcess | undefined;
    let wavesStack: string;

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
      cluster = clusters[2]!;
      await cluster.kubectl.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      agent = await registerAgent(broker.admin);
      wavesStack = await createStack(broker.admin);
      await target(broker.admin, agent.id, wavesStack);
      proc = await spawnAgent(broker.url, agent, cluster.kube.kubeconfigPath, {
        // A grace longer than the deadline: a never-Ready pod stays "not yet" (not degraded) until the wave runs out of time.
        env: { BROKKR__AGENT__WAVE_HEALTH_TIMEOUT_SECONDS: '10', BROKKR__AGENT__READINESS_GRACE_SECONDS: '600' },
      });
    });

    after(async () => {
      await proc?.stop();
    });

    afterEach(function () {
      if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-8000));
    });

    it('holds wave 1 back while wave 0’s pods are never Ready, and fails the stack naming the wave at the deadline', async () => {
      const bystander = await createStack(broker.admin);
      await target(broker.admin, agent.id, bystander);
      const d = await deploy(broker.admin, wavesStack, manifest('demo/db:never-ready'));
      const other = await deploy(broker.admin, bystander, configMap(NS, 'bystander', { any: 'thing' }));
      const failure = await eventFor(d, 'FAILURE');
      expect(failure.message).to.match(/^wave 0 not healthy within 10 s; later waves were not applied:/);
      // The waiting stack did not hold the agent's pass: a stack deployed after it was applied meanwhile.
      const applied = await eventFor(other, 'SUCCESS');
      expect(new Date(applied.created_at).getTime()).to.be.below(new Date(failure.created_at).getTime());
      expect(failure.message).to.contain(`Deployment '${NS}/db': 0/1 pods ready`);
      expect(await cluster.kubectl.get(`/apis/apps/v1/namespaces/${NS}/deployments/db`)).to.not.equal(undefined);
      expect(await cluster.kubectl.get(configMapPath('db-settings'))).to.not.equal(undefined);
      expect(await cluster.kubectl.get(configMapPath('app'))).to.equal(undefined);
    });

    it('applies wave 1 once wave 0’s pods are Ready, and only then reports SUCCESS', async () => {
      const d = await deploy(broker.admin, wavesStack, manifest('demo/db:1'));
      await eventFor(d, 'SUCCESS');
      const app = await cluster.kubectl.get<Meta>(configMapPath('app'));
      expect(app, 'wave 1 applied').to.not.equal(undefined);
      const pods = (await cluster.kubectl.get<{ items: Pod[] }>(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Ddb`))!.items;
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
      expect(await cluster.kubectl.get(configMapPath('api-config'))).to.equal(undefined);
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
      expect(await cluster.kubectl.get(configMapPath('first'))).to.equal(undefined);
    });

    it('deletes the stack highest wave first: wave 1 is marked deleted before wave 0', async () => {
      const { kubectl } = cluster;
      // Held by a finalizer, each ConfigMap keeps the resourceVersion of the write that marked it
      // deleted (nothing else writes these two), which orders the two deletions.
      for (const name of ['app', 'db-settings']) await kubectl.mergePatch(configMapPath(name), { metadata: { finalizers: [HOLD] } });
      const marker = await deploy(broker.admin, wavesStack, '', true);
      await eventFor(marker, 'SUCCESS', 'DELETED');
      const [app, settings] = await Promise.all(['app', 'db-settings'].map((name) => kubectl.get<Meta>(configMapPath(name))));
      expect(app?.metadata.deletionTimestamp, 'wave 1 deleted').to.be.a('string');
      expect(settings?.metadata.deletionTimestamp, 'wave 0 deleted').to.be.a('string');
      expect(BigInt(app!.metadata.resourceVersion) < BigInt(settings!.metadata.resourceVersion)).to.equal(true);
      for (const name of ['app', 'db-settings']) await kubectl.mergePatch(configMapPath(name), { metadata: { finalizers: null } });
      await eventually(async () => (await kubectl.get(configMapPath('app'))) === undefined, { what: 'the ConfigMap gone' });
    });
  });
});
