import { expect } from 'chai';
import { AppsV1Api, BatchV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { eventually, startKubeCluster, type KubeCluster } from '../src/index.ts';

/**
 * The full test cluster gives the signals a real one does: controllers turn a Deployment into Ready
 * pods on KWOK's nodes and a Job into a completed pod, and the failure stages a test can ask for
 * (shared/infra/kwok/pod-stages.yaml) look like a cluster's own failures.
 */

const deployment = (name: string, image: string) => ({
  metadata: { name, namespace: 'default' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
  },
});

const job = (name: string, annotations: Record<string, string> = {}) => ({
  metadata: { name, namespace: 'default' },
  spec: {
    backoffLimit: 0,
    template: { metadata: { annotations }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1' }] } },
  },
});

describe('testkit: a cluster where pods run (controllers, scheduler, KWOK)', function () {
  this.timeout(180_000);
  let kube: KubeCluster;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let batch: BatchV1Api;

  before(async () => {
    kube = await startKubeCluster();
    core = kube.kubeConfig.makeApiClient(CoreV1Api);
    apps = kube.kubeConfig.makeApiClient(AppsV1Api);
    batch = kube.kubeConfig.makeApiClient(BatchV1Api);
  });
  after(() => kube?.stop());

  const podsOf = async (app: string): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${app}` })).items;

  it('runs a Deployment: two pods scheduled on the simulated nodes, Running and Ready, the Deployment Available', async () => {
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('web', 'nginx:1.27') });
    await eventually(
      async () => {
        const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
        expect(d.status?.readyReplicas).to.equal(2);
        expect(d.status?.conditions?.find((c) => c.type === 'Available')?.status).to.equal('True');
        return true;
      },
      { timeoutMs: 60_000 },
    );
    for (const pod of await podsOf('web')) {
      expect(kube.nodeNames).to.include(pod.spec?.nodeName);
      expect(pod.status?.phase).to.equal('Running');
    }
  });

  it('an image tagged :never-ready runs but never becomes Ready; :crashloop waits in CrashLoopBackOff', async () => {
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('stuck', 'nginx:never-ready') });
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('crashing', 'nginx:crashloop') });
    await eventually(
      async () => {
        const stuck = await podsOf('stuck');
        expect(stuck).to.have.length(2);
        for (const pod of stuck) {
          expect(pod.status?.phase).to.equal('Running');
          expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).to.equal('False');
        }
        const crashing = await podsOf('crashing');
        expect(crashing).to.have.length(2);
        for (const pod of crashing) expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).to.equal('CrashLoopBackOff');
        return true;
      },
      { timeoutMs: 60_000 },
    );
    const d = await apps.readNamespacedDeployment({ name: 'stuck', namespace: 'default' });
    expect(d.status?.readyReplicas ?? 0).to.equal(0);
  });

  it('a Job completes through the Job controller; one annotated brokkr.io/kwok-fail fails', async () => {
    await batch.createNamespacedJob({ namespace: 'default', body: job('ok') });
    await batch.createNamespacedJob({ namespace: 'default', body: job('broken', { 'brokkr.io/kwok-fail': 'true' }) });
    await eventually(
      async () => {
        const ok = await batch.readNamespacedJob({ name: 'ok', namespace: 'default' });
        expect(ok.status?.conditions?.find((c) => c.type === 'Complete')?.status).to.equal('True');
        const broken = await batch.readNamespacedJob({ name: 'broken', namespace: 'default' });
        expect(broken.status?.conditions?.find((c) => c.type === 'Failed')?.status).to.equal('True');
        return true;
      },
      { timeoutMs: 60_000 },
    );
  });

  it('a cluster started with failures: false runs even a :never-ready image Ready', async () => {
    const lenient = await startKubeCluster({ failures: false, nodes: 1 });
    try {
      const lenientApps = lenient.kubeConfig.makeApiClient(AppsV1Api);
      await lenientApps.createNamespacedDeployment({ namespace: 'default', body: deployment('fine', 'nginx:never-ready') });
      await eventually(
        async () => (await lenientApps.readNamespacedDeployment({ name: 'fine', namespace: 'default' })).status?.readyReplicas === 2,
        { timeoutMs: 60_000 },
      );
    } finally {
      await lenient.stop();
    }
  });

  it("serves every container's log from the cluster's log file, as kubectl logs reads it", async () => {
    const [pod] = await podsOf('web');
    await kube.appendPodLog('hello from a simulated container');
    const log = await core.readNamespacedPodLog({ name: pod!.metadata!.name!, namespace: 'default', container: 'main' });
    expect(log).to.include('hello from a simulated container');
  });
});
