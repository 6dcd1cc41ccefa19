import { expect } from 'chai';
import { eventually, startKubeCluster, useTestInfra, type KubeCluster } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { createStack, deploy, registerAgent, startBroker, target, type Broker, type RegisteredAgent } from './support/broker.ts';
import { deployment, namespace, stream } from './support/manifests.ts';

/**
 * Deployment health from the signal a cluster gives: the real Deployment and ReplicaSet
 * controllers make the pods, the scheduler places them on KWOK's simulated nodes, and KWOK moves
 * them through their lifecycle (Ready; never Ready for an image tagged `:never-ready`;
 * CrashLoopBackOff for `:crashloop`). Nothing here plays a controller or a kubelet by hand.
 */
describe('agent deployment health (end to end, pods from controllers and KWOK)', function () {
  this.timeout(180_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeCluster;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess | undefined;

  interface HealthRecord {
    status: string;
    summary: string;
  }
  const health = async (doId: string) =>
    (await broker.admin.get(`/deployment-objects/${doId}/health`)).body as { overall_status: string; health_records: HealthRecord[] };
  // A pod that is not scheduled yet counts as healthy (Brokkr's rule), so a check of the pods waits for them too.
  interface Summary {
    pods_ready: number;
    pods_total: number;
    conditions: string[];
    resources: Record<string, unknown>[];
  }
  const reportOf = (doId: string, status: string, pods: (summary: Summary) => boolean = () => true) =>
    eventually(
      async () => {
        const h = await health(doId);
        const record = h.health_records[0];
        const summary = record ? (JSON.parse(record.summary) as Summary) : undefined;
        return record?.status === status && summary && pods(summary) ? { ...h, summary } : undefined;
      },
      { timeoutMs: 90_000, what: `a ${status} report for ${doId}` },
    );
  const scaled = (yaml: string, replicas: number) => yaml.replace('replicas: 1', `replicas: ${replicas}`);

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    agent = await registerAgent(broker.admin);
    proc = await spawnAgent(broker.url, agent, kube.kubeconfigPath, {
      env: { BROKKR__AGENT__DEPLOYMENT_HEALTH_CHECK_INTERVAL: '1', BROKKR__AGENT__READINESS_GRACE_SECONDS: '3' },
    });
  });

  after(async () => {
    await proc?.stop();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-6000));
  });

  it('is healthy once the Deployment controller’s pods are Ready on the simulated nodes', async () => {
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const d = await deploy(broker.admin, stack, stream(namespace('shop'), scaled(deployment('shop', 'web'), 2)));
    const report = await reportOf(d.id, 'healthy', (summary) => summary.pods_ready === 2);
    expect(report.summary).to.deep.include({ pods_ready: 2, pods_total: 2, conditions: [] });
  });

  it('turns degraded (CrashLoopBackOff) when a new image crash-loops, and healthy again when it is fixed', async () => {
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    await reportOf((await deploy(broker.admin, stack, stream(namespace('cart'), deployment('cart', 'api')))).id, 'healthy');
    const broken = await deploy(broker.admin, stack, stream(namespace('cart'), deployment('cart', 'api', 'shop/api:crashloop')));
    const degraded = await reportOf(broken.id, 'degraded');
    expect(degraded.summary.conditions).to.include('CrashLoopBackOff');
    expect(degraded.summary.resources[0]).to.include({ kind: 'Pod', namespace: 'cart', ready: false });
    const fixed = await deploy(broker.admin, stack, stream(namespace('cart'), deployment('cart', 'api', 'shop/api:1.1')));
    await reportOf(fixed.id, 'healthy');
  });

  it('turns degraded (NotReady) when the pods run but never pass readiness', async () => {
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const d = await deploy(broker.admin, stack, stream(namespace('search'), deployment('search', 'index', 'search/index:never-ready')));
    const degraded = await reportOf(d.id, 'degraded');
    expect(degraded.summary).to.deep.include({ pods_ready: 0, pods_total: 1, conditions: ['NotReady'] });
  });
});
