import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { WorkOrder, WorkOrderLog } from '@brokkr/contracts';
import {
  eventually,
  freePort,
  spawnService,
  startKubeCluster,
  useTestInfra,
  type KubeCluster,
  type RunningService,
  type TestClient,
} from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { registerAgent, startBroker, type Broker, type RegisteredAgent } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';

const SHIPWRIGHT = 'shipwright.io';

/** Minimal Shipwright CRDs (shipwright.io/v1beta1): any spec, BuildRun with a status subresource. */
function shipwrightCrd(kind: 'Build' | 'BuildRun') {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${SHIPWRIGHT}` },
    spec: {
      group: SHIPWRIGHT,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

interface JobOptions {
  /** The pod fails (exit code 1) instead of completing: the cluster's pod stages honour brokkr.io/kwok-fail. */
  fail?: boolean;
  /** The pod runs only on a node labelled with this gate (see openGate): the Job waits until the test lets it run. */
  gate?: string;
}

const gateLabel = (gate: string) => `jobs.brokkr.test/${gate}`;

function podTemplateExtras({ fail, gate }: JobOptions): string {
  const annotations = fail ? `\n      annotations:\n        brokkr.io/kwok-fail: "true"` : '';
  const nodeSelector = gate ? `\n      nodeSelector:\n        ${gateLabel(gate)}: open` : '';
  return `${annotations ? `\n    metadata:${annotations}` : ''}\n    spec:${nodeSelector}`;
}

const jobYaml = (namespace: string, name: string, options: JobOptions = {}) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}-input
  namespace: ${namespace}
data:
  greeting: hello
---
apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  backoffLimit: 0
  template:${podTemplateExtras(options)}
      restartPolicy: Never
      containers:
        - name: main
          image: busybox:1.36
          command: ["sh", "-c", "echo done"]
`;

/**
 * Work orders end to end: the real api (Postgres + NATS) and maintenance (stale claims, due
 * retries), the agent's real main, a cluster where pods run (the Job controller, the scheduler and
 * KWOK's simulated nodes): a Job completes, or fails, because its pod did. Where a test needs a
 * Job to stay unfinished for a while, its pod asks for a node label no node has yet (a gate) and
 * the test labels a node when the Job may run. No Shipwright controller runs here: the `build`
 * tests write the BuildRun status that controller would.
 */
describe('work orders (end to end)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  let hub: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let maintenance: RunningService;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess;
  const extra: RunningService[] = [];
  const agentEnv = { env: { BROKKR__AGENT__WORK_ORDER_CONCURRENCY: '2', BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '10' } };

  before(async () => {
    [hub, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    kubectl = new Kubectl(kube);
    for (const kind of ['Build', 'BuildRun'] as const)
      await kubectl.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', shipwrightCrd(kind));
    const healthPort = await freePort();
    maintenance = await spawnService({
      service: 'maintenance',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__HEALTH__PORT: String(healthPort),
        BROKKR__MAINTENANCE__WORK_ORDER_INTERVAL_SECONDS: '1',
      },
      readyUrl: `http://127.0.0.1:${healthPort}/readyz`,
    });
    agent = await registerAgent(hub.admin);
    proc = await spawnAgent(hub.url, agent, kube.kubeconfigPath, agentEnv);
  });

  after(async () => {
    await Promise.allSettled([proc?.stop(), ...extra.map((s) => s.stop())]);
    await Promise.allSettled([maintenance?.stop(), hub?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed')
      console.log(proc?.output().slice(-8000), extra.map((e) => e.output().slice(-4000)).join('\n'));
  });

  async function createOrder(body: Record<string, unknown>): Promise<WorkOrder> {
    const res = await hub.admin.post('/work-orders', { max_retries: 0, backoff_seconds: 1, ...body });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as WorkOrder;
  }

  async function finished(id: string, admin: TestClient = hub.admin, timeoutMs = 60_000): Promise<WorkOrderLog> {
    return eventually(
      async () => {
        const res = await admin.get<WorkOrderLog>(`/work-order-log/${id}`);
        return res.status === 200 ? res.body : undefined;
      },
      { timeoutMs, intervalMs: 250, what: `work order ${id} in the log` },
    );
  }

  async function order(id: string): Promise<WorkOrder> {
    const res = await hub.admin.get<WorkOrder>(`/work-orders/${id}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  const jobPath = (ns: string, name: string) => `/apis/batch/v1/namespaces/${ns}/jobs/${name}`;

  /** Lets a gated Job run: a node now carries the label its pod asks for, so the scheduler places it. */
  async function openGate(gate: string): Promise<void> {
    await kubectl.mergePatch(`/api/v1/nodes/${kube.nodeNames[0]}`, { metadata: { labels: { [gateLabel(gate)]: 'open' } } });
  }

  /** The Job controller has marked the Job Complete. */
  async function jobComplete(ns: string, name: string): Promise<boolean> {
    const job = await kubectl.get<{ status?: { conditions?: { type: string; status: string }[] } }>(jobPath(ns, name));
    return !!job?.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
  }

  /** The sum of a metric's samples whose labels include the given ones (the registry adds `service`). */
  async function metricValue(url: string, name: string, labels: Record<string, string>): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      const m = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const have = Object.fromEntries([...m[2]!.matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
      if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
    }
    return sum;
  }

  it('custom: applies the YAML, waits for the Job controller to complete the Job, reports COMPLETED with its log row', async () => {
    const ns = `wo-${randomBytes(3).toString('hex')}`;
    const created = await createOrder({
      work_type: 'custom',
      yaml_content: jobYaml(ns, 'migrate', { gate: ns }),
      targeting: { agent_ids: [agent.id] },
    });
    const job = await eventually(() => kubectl.get<{ metadata: { labels: Record<string, string> } }>(jobPath(ns, 'migrate')), {
      what: 'the Job applied',
    });
    expect(job.metadata.labels).to.include({ 'brokkr.io/work-order-id': created.id, 'brokkr.io/owner-id': agent.id });
    expect(job.metadata.labels).not.to.have.property('k8s.brokkr.io/stack');
    const claimed = await order(created.id);
    expect(claimed.status).to.equal('CLAIMED');
    expect(claimed.claimed_by).to.equal(agent.id);
    expect(await kubectl.get(`/api/v1/namespaces/${ns}/configmaps/migrate-input`)).to.not.equal(undefined);

    // The pod waits for its gate: the order stays CLAIMED until the Job really completes.
    await openGate(ns);
    const log = await finished(created.id);
    expect(log.success, log.result_message ?? '').to.equal(true);
    expect(log.claimed_by).to.equal(agent.id);
    expect(log.retries_attempted).to.equal(0);
    expect(log.result_message).to.equal(
      `Applied 3 resource(s). Job(s) ${ns}/migrate completed successfully. 2 resource(s) of kind(s) Namespace, ConfigMap applied only, not monitored.`,
    );
    expect((await order(created.id)).status).to.equal('COMPLETED');
    const done = await kubectl.get<{ status: { succeeded?: number } }>(jobPath(ns, 'migrate'));
    expect(done?.status.succeeded, 'the Job controller counted the pod that completed').to.equal(1);
    // Nothing is cleaned up (as Brokkr): the Job stays for its logs; reconciliation does not prune it either.
    expect(await kubectl.get(jobPath(ns, 'migrate'))).to.not.equal(undefined);
    await eventually(
      async () => (await metricValue(proc.healthUrl, 'brokkr_agent_work_orders_succeeded_total', { work_type: 'custom' })) >= 1,
      {
        what: 'the succeeded counter',
      },
    );
    expect(await metricValue(proc.healthUrl, 'brokkr_agent_work_orders_claimed_total', { work_type: 'custom' })).to.be.at.least(1);
    expect(
      await metricValue(proc.healthUrl, 'brokkr_agent_work_order_duration_seconds_count', { work_type: 'custom', result: 'success' }),
    ).to.be.at.least(1);
  });

  it('custom: a transient apiserver failure is retried; a Job whose pod fails then ends the order FAILED (not retried)', async () => {
    const ns = `wo-${randomBytes(3).toString('hex')}`;
    await kubectl.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'wo-test': ns } } });
    // An admission webhook nobody answers, failurePolicy Fail: the apiserver answers 500 InternalError.
    const webhookName = `${ns}.brokkr.test`;
    const deadPort = await freePort();
    await kubectl.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: webhookName },
      webhooks: [
        {
          name: webhookName,
          clientConfig: { url: `https://127.0.0.1:${deadPort}/validate` },
          rules: [{ apiGroups: ['batch'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['jobs'] }],
          namespaceSelector: { matchLabels: { 'wo-test': ns } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 2,
        },
      ],
    });
    const yaml = jobYaml(ns, 'flaky', { fail: true }).split('---\n').slice(2).join('---\n'); // the Job only
    const created = await createOrder({ work_type: 'custom', yaml_content: yaml, max_retries: 2, targeting: { agent_ids: [agent.id] } });
    const retry = await eventually(
      async () => {
        const o = await order(created.id);
        return o.retry_count >= 1 ? o : undefined;
      },
      { timeoutMs: 60_000, what: 'a retry scheduled after the 500' },
    );
    expect(retry.last_error).to.match(/failed to apply work order objects/);
    expect(retry.last_error).to.match(/webhook/);
    expect(
      (await kubectl.call('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${webhookName}`)).status,
    ).to.equal(200);

    await eventually(() => kubectl.get(jobPath(ns, 'flaky')), { timeoutMs: 60_000, what: 'the Job applied on the retry' });
    // Its pod exits 1 and backoffLimit is 0: the Job controller marks the Job Failed.
    const log = await finished(created.id);
    expect(log.success).to.equal(false);
    expect(log.retries_attempted).to.equal(1);
    expect(log.result_message).to.equal(
      `Job ${ns}/flaky ran and failed: BackoffLimitExceeded: Job has reached the specified backoff limit`,
    );
    expect((await order(created.id)).status).to.equal('FAILED');
    const failed = await kubectl.get<{ status: { failed?: number } }>(jobPath(ns, 'flaky'));
    expect(failed?.status.failed, 'the Job controller counted the pod that failed').to.equal(1);
    expect(
      await metricValue(proc.healthUrl, 'brokkr_agent_work_orders_failed_total', { work_type: 'custom', retryable: 'true' }),
    ).to.be.at.least(1);
    expect(
      await metricValue(proc.healthUrl, 'brokkr_agent_work_orders_failed_total', { work_type: 'custom', retryable: 'false' }),
    ).to.be.at.least(1);
  });

  it('custom: invalid YAML and an unknown work type fail at once, not retryable', async () => {
    const bad = await createOrder({ work_type: 'custom', yaml_content: 'kind: [', max_retries: 3, targeting: { agent_ids: [agent.id] } });
    const unknown = await createOrder({
      work_type: 'diagnose',
      yaml_content: 'a: 1',
      max_retries: 3,
      targeting: { agent_ids: [agent.id] },
    });
    const [badLog, unknownLog] = await Promise.all([finished(bad.id), finished(unknown.id)]);
    expect(badLog.success).to.equal(false);
    expect(badLog.retries_attempted).to.equal(0);
    expect(badLog.result_message).to.match(/^Invalid YAML: /);
    expect(unknownLog.success).to.equal(false);
    expect(unknownLog.retries_attempted).to.equal(0);
    expect(unknownLog.result_message).to.equal('Unknown work type: diagnose');
  });

  it('build: applies the Build, creates a BuildRun and reports the digest from its status', async () => {
    const ns = `wo-${randomBytes(3).toString('hex')}`;
    await kubectl.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const yaml = `apiVersion: shipwright.io/v1beta1
kind: Build
metadata:
  name: app
  namespace: ${ns}
spec:
  source:
    type: Git
    git:
      url: https://github.com/shipwright-io/sample-go
  strategy:
    name: buildah
    kind: ClusterBuildStrategy
  output:
    image: registry.example/app:latest
`;
    const created = await createOrder({ work_type: 'build', yaml_content: yaml, targeting: { agent_ids: [agent.id] } });
    const runName = `app-${created.id.slice(0, 8)}`;
    const runPath = `/apis/shipwright.io/v1beta1/namespaces/${ns}/buildruns/${runName}`;
    const run = await eventually(() => kubectl.get<{ metadata: { labels: Record<string, string> }; spec: unknown }>(runPath), {
      what: 'the BuildRun created',
    });
    expect(run.metadata.labels).to.include({ 'brokkr.io/work-order-id': created.id, 'shipwright.io/build': 'app' });
    expect(run.spec).to.deep.equal({ build: { name: 'app' } });
    expect(await kubectl.get(`/apis/shipwright.io/v1beta1/namespaces/${ns}/builds/app`)).to.not.equal(undefined);

    const digest = `sha256:${randomBytes(32).toString('hex')}`;
    await kubectl.mergePatch(`${runPath}/status`, {
      status: { conditions: [{ type: 'Succeeded', status: 'True', reason: 'Succeeded' }], output: { digest } },
    });
    const log = await finished(created.id);
    expect(log.success).to.equal(true);
    expect(log.result_message).to.equal(digest);
  });

  it('build: a failed BuildRun is reported FAILED with its failure details', async () => {
    const ns = `wo-${randomBytes(3).toString('hex')}`;
    await kubectl.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // A prepared Build referenced through Brokkr's WorkOrder document.
    await kubectl.create(`/apis/shipwright.io/v1beta1/namespaces/${ns}/builds`, {
      apiVersion: 'shipwright.io/v1beta1',
      kind: 'Build',
      metadata: { name: 'lib', namespace: ns },
      spec: {},
    });
    const yaml = `apiVersion: brokkr.io/v1\nkind: WorkOrder\nmetadata:\n  name: lib-build\n  namespace: ${ns}\nspec:\n  buildRef:\n    name: lib\n`;
    const created = await createOrder({ work_type: 'build', yaml_content: yaml, max_retries: 2, targeting: { agent_ids: [agent.id] } });
    const runPath = `/apis/shipwright.io/v1beta1/namespaces/${ns}/buildruns/lib-${created.id.slice(0, 8)}`;
    await eventually(() => kubectl.get(runPath), { what: 'the BuildRun created' });
    await kubectl.mergePatch(`${runPath}/status`, {
      status: {
        conditions: [{ type: 'Succeeded', status: 'False', reason: 'Failed' }],
        failureDetails: { reason: 'GitRemotePrivate', message: 'the repository is private' },
      },
    });
    const log = await finished(created.id);
    expect(log.success).to.equal(false);
    expect(log.retries_attempted).to.equal(0);
    expect(log.result_message).to.equal('GitRemotePrivate: the repository is private');
  });

  it('an agent killed mid-order leaves it to the stale-claim release; another agent finishes it', async () => {
    const [first, second] = [await registerAgent(hub.admin), await registerAgent(hub.admin)];
    const ns = `wo-${randomBytes(3).toString('hex')}`;
    const firstProc = await spawnAgent(hub.url, first, kube.kubeconfigPath, agentEnv);
    extra.push(firstProc);
    const created = await createOrder({
      work_type: 'custom',
      yaml_content: jobYaml(ns, 'long', { gate: ns }),
      claim_timeout_seconds: 8,
      targeting: { agent_ids: [first.id, second.id] },
    });
    await eventually(() => kubectl.get(jobPath(ns, 'long')), { what: 'the Job applied by the first agent' });
    expect((await order(created.id)).claimed_by).to.equal(first.id);
    await firstProc.kill();

    // The Job finishes while nobody watches it; the second agent finds it complete once it gets the order.
    await openGate(ns);
    await eventually(() => jobComplete(ns, 'long'), { what: 'the Job completed by the Job controller' });
    const secondProc = await spawnAgent(hub.url, second, kube.kubeconfigPath, agentEnv);
    extra.push(secondProc);
    const log = await finished(created.id, hub.admin, 60_000);
    expect(log.success, log.result_message ?? '').to.equal(true);
    expect(log.claimed_by).to.equal(second.id);
    expect(log.retries_attempted).to.equal(0);
  });

  it('SIGTERM: the order in flight finishes and reports before the agent exits', async () => {
    const solo = await registerAgent(hub.admin);
    const ns = `wo-${randomBytes(3).toString('hex')}`;
    const soloProc = await spawnAgent(hub.url, solo, kube.kubeconfigPath, agentEnv);
    extra.push(soloProc);
    const created = await createOrder({
      work_type: 'custom',
      yaml_content: jobYaml(ns, 'drain', { gate: ns }),
      targeting: { agent_ids: [solo.id] },
    });
    await eventually(() => kubectl.get(jobPath(ns, 'drain')), { what: 'the Job applied' });
    const stopped = soloProc.stop();
    await new Promise((r) => setTimeout(r, 1000));
    // Only now may the Job run: it completes within the agent's drain grace.
    await openGate(ns);
    expect(await stopped).to.equal(0);
    const log = await finished(created.id);
    expect(log.success).to.equal(true);
    expect(log.claimed_by).to.equal(solo.id);
  });
});
