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
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { namespace, stream } from './support/manifests.ts';
import {
  INJECTED_ANNOTATION,
  MUTATED_ANNOTATION,
  MUTATE_LABEL,
  startMutatingWebhook,
  type MutatingWebhook,
} from './support/mutating-webhook.ts';

interface DriftField {
  path: string;
  desired: unknown;
  live: unknown;
  manager: string | null;
  operation: string | null;
  time: string | null;
  withheld?: boolean;
}
interface DriftRecord {
  id: string;
  state: string;
  missing: boolean;
  fields: DriftField[];
  object: { kind: string; name: string };
  first_seen: string;
  last_seen: string;
}

/**
 * Drift detection against a cluster where the controllers run (kube-controller-manager,
 * kube-scheduler, KWOK's nodes): another client changes what the agent applied, with its own field
 * manager, and the agent reports it to the hub with the path, both values and that manager, then
 * corrects it or leaves it by the stack's policy. Defaults, a real mutating webhook's changes and
 * status are not drift. Every wait is for a state (a record, a value, a number of sweeps), never
 * for a time.
 */
describe('agent drift detection (end to end, controllers and KWOK)', function () {
  this.timeout(240_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let webhook: MutatingWebhook;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess | undefined;

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    kubectl = new Kubectl(kube);
    webhook = await startMutatingWebhook(kubectl);
    agent = await registerAgent(broker.admin);
    proc = await spawnAgent(broker.url, agent, kube.kubeconfigPath, {
      // A sweep every 2 s, so "three resyncs" are quick to wait for.
      env: { BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '2', BROKKR__AGENT__DRIFT_DEBOUNCE_MS: '200' },
    });
  });

  after(async () => {
    await proc?.stop();
    await webhook?.stop().catch(() => undefined);
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-8000));
  });

  const deploymentYaml = (ns: string, name: string, extra: { labels?: Record<string, string> } = {}) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
  labels: {tier: web${Object.entries(extra.labels ?? {})
    .map(([k, v]) => `, "${k}": "${v}"`)
    .join('')}}
spec:
  replicas: 2
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: main
          image: shop/${name}:1.0
`;

  const deploymentPath = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

  /** A stack targeted at the agent, with a drift policy when given, and its objects applied. */
  async function appliedStack(policy: Record<string, unknown> | undefined, ...docs: string[]): Promise<string> {
    const stack = await createStack(broker.admin);
    if (policy) expect((await broker.admin.put(`/stacks/${stack}/drift-policy`, policy)).status).to.equal(200);
    await target(broker.admin, agent.id, stack);
    const d = await deploy(broker.admin, stack, stream(...docs));
    await eventually(
      async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === d.id && e.status === 'SUCCESS'),
      { timeoutMs: 90_000, what: `the agent applying stack ${stack}` },
    );
    return stack;
  }

  async function records(stackId: string, query: Record<string, string> = {}): Promise<DriftRecord[]> {
    const res = await broker.admin.get<{ items: DriftRecord[] }>(`/stacks/${stackId}/drift`, { query });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.items;
  }

  const oneRecord = (stackId: string, state: string, what: string) =>
    eventually(
      async () => {
        const found = await records(stackId, { state });
        return found.length === 1 ? found[0] : undefined;
      },
      { timeoutMs: 60_000, what },
    );

  /** A counter or gauge of the agent's /metrics (summed over labels matching `labels`). */
  async function metric(name: string, labels = ''): Promise<number> {
    const text = await (await fetch(`${proc!.healthUrl}/metrics`)).text();
    const lines = text.split('\n').filter((l) => l.startsWith(name) && l.includes(labels) && !l.startsWith('#'));
    return lines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  }

  const sweeps = () => metric('brokkr_agent_drift_sweeps_total');

  async function waitForSweeps(from: number, count: number): Promise<void> {
    await eventually(async () => (await sweeps()) >= from + count, { timeoutMs: 60_000, what: `${count} drift sweeps` });
  }

  /** Another client's write with its own field manager (kubectl's merge patches, as `kubectl scale` or `kubectl edit` send them). */
  async function patchAs(manager: string, path: string, patch: unknown): Promise<void> {
    const res = await kubectl.call('PATCH', `${path}?fieldManager=${manager}`, patch, 'application/merge-patch+json');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  const scale = (ns: string, name: string, replicas: number, manager: string) =>
    patchAs(manager, `${deploymentPath(ns, name)}/scale`, { spec: { replicas } });

  async function liveReplicas(ns: string, name: string): Promise<number> {
    const live = await kubectl.get<{ spec: { replicas: number } }>(deploymentPath(ns, name));
    return live!.spec.replicas;
  }

  it('report mode: a Deployment scaled by another client yields one open record (path, both values, that manager); the live value stays for three resyncs', async () => {
    const stack = await appliedStack({ mode: 'report' }, namespace('drift-report'), deploymentYaml('drift-report', 'web'));
    await scale('drift-report', 'web', 5, 'drift-test-scaler');

    const record = await oneRecord(stack, 'open', 'an open drift record for the scaled Deployment');
    expect(record.object).to.deep.include({ kind: 'Deployment', name: 'web' });
    expect(record.missing).to.equal(false);
    expect(record.fields).to.have.length(1);
    expect(record.fields[0]).to.deep.include({
      path: '/spec/replicas',
      desired: 2,
      live: 5,
      manager: 'drift-test-scaler',
      operation: 'Update',
    });

    await waitForSweeps(await sweeps(), 3);
    expect(await liveReplicas('drift-report', 'web')).to.equal(5);
    const still = await records(stack);
    expect(still.map((r) => [r.id, r.state])).to.deep.equal([[record.id, 'open']]);
    expect(Date.parse(still[0]!.last_seen)).to.be.greaterThan(Date.parse(record.last_seen));
  });

  it('correct mode: the scaled Deployment is put back within one resync and its record is corrected', async () => {
    const stack = await appliedStack(undefined, namespace('drift-correct'), deploymentYaml('drift-correct', 'web'));
    const corrections = await metric('brokkr_agent_drift_corrections_total', 'kind="Deployment"');
    const before = await sweeps();
    await scale('drift-correct', 'web', 5, 'drift-test-scaler');

    const record = await oneRecord(stack, 'corrected', 'a corrected drift record');
    await eventually(async () => (await liveReplicas('drift-correct', 'web')) === 2, { what: 'replicas back to 2' });
    // At most the sweep in progress when the change was made and the next one, the first to see it, have ended.
    expect((await sweeps()) - before).to.be.at.most(2);
    expect(record.fields[0]).to.deep.include({ path: '/spec/replicas', desired: 2, live: 5, manager: 'drift-test-scaler' });
    expect(await metric('brokkr_agent_drift_corrections_total', 'kind="Deployment"')).to.equal(corrections + 1);
    expect(await records(stack, { state: 'open' })).to.deep.equal([]);
  });

  it('an ignore rule, a status-only change, defaulted fields and a mutating webhook’s fields are not drift; a field added by hand is not either with the owned comparison', async () => {
    const stack = await appliedStack(
      { mode: 'report', ignore: [{ target: { kind: 'Deployment' }, paths: ['/spec/replicas'], managers: ['^drift-test-hpa$'] }] },
      namespace('drift-quiet'),
      deploymentYaml('drift-quiet', 'web', { labels: { [MUTATE_LABEL]: 'true' } }),
    );
    const path = deploymentPath('drift-quiet', 'web');
    const live = await kubectl.get<{ metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> }>(path);
    expect(live!.metadata.annotations[MUTATED_ANNOTATION], 'the webhook mutated the Deployment').to.equal('yes');
    expect(live!.spec.revisionHistoryLimit, 'the apiserver defaulted fields the manifest leaves out').to.equal(10);
    expect(webhook.calls).to.be.greaterThan(0);

    await scale('drift-quiet', 'web', 4, 'drift-test-hpa');
    await patchAs('drift-test-status', `${path}/status`, { status: { collisionCount: 3 } });
    await patchAs('drift-test-hand', path, { metadata: { labels: { 'added-by-hand': 'yes' } } });
    // The canary: a field the stack sets, changed last. Its record shows what the check saw by then.
    await patchAs('drift-test-canary', path, { metadata: { labels: { tier: 'hacked' } } });

    const record = await oneRecord(stack, 'open', 'the canary’s drift record');
    expect(record.fields.map((f) => f.path)).to.deep.equal(['/metadata/labels/tier']);
    expect(record.fields[0]).to.deep.include({ desired: 'web', live: 'hacked', manager: 'drift-test-canary' });
    const live2 = await kubectl.get<{
      metadata: { annotations: Record<string, string> };
      spec: { replicas: number; template: { metadata: { annotations: Record<string, string> } } };
    }>(path);
    expect(live2!.spec.replicas, 'the ignored field is left as the other manager set it').to.equal(4);
    expect(live2!.spec.template.metadata.annotations[INJECTED_ANNOTATION]).to.equal('sidecar');
  });

  it('full comparison: a field added by hand is reported (desired null, its manager); the cluster’s own annotations are not', async () => {
    const stack = await appliedStack({ mode: 'report', comparison: 'full' }, namespace('drift-full'), deploymentYaml('drift-full', 'web'));
    const path = deploymentPath('drift-full', 'web');
    await eventually(
      async () =>
        (await kubectl.get<{ metadata: { annotations: Record<string, string> } }>(path))!.metadata.annotations[
          'deployment.kubernetes.io/revision'
        ],
      { what: 'the Deployment controller’s revision annotation' },
    );
    await patchAs('kubectl-edit', path, { metadata: { labels: { 'added-by-hand': 'yes' } } });

    const record = await oneRecord(stack, 'open', 'the added label’s record');
    expect(record.fields).to.deep.equal([
      {
        path: '/metadata/labels/added-by-hand',
        desired: null,
        live: 'yes',
        manager: 'kubectl-edit',
        operation: 'Update',
        time: record.fields[0]!.time,
      },
    ]);
  });

  it('a deleted object is drift: in correct mode it is created again and its record is corrected (missing)', async () => {
    const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: drift-deleted
data:
  mode: fast
`;
    const stack = await appliedStack(undefined, namespace('drift-deleted'), configMap);
    expect(await kubectl.remove('/api/v1/namespaces/drift-deleted/configmaps/settings')).to.equal(200);

    const record = await oneRecord(stack, 'corrected', 'a corrected record of the deleted ConfigMap');
    expect(record).to.deep.include({ missing: true });
    expect(record.object).to.deep.include({ kind: 'ConfigMap', name: 'settings' });
    await eventually(() => kubectl.get('/api/v1/namespaces/drift-deleted/configmaps/settings'), { what: 'the ConfigMap created again' });
  });

  it('never sends a Secret’s values: the drifted path only, withheld', async () => {
    const secret = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: drift-secret
stringData:
  password: desired-password
`;
    const stack = await appliedStack({ mode: 'report' }, namespace('drift-secret'), secret);
    await patchAs('drift-test-hand', '/api/v1/namespaces/drift-secret/secrets/db', {
      data: { password: Buffer.from('live-password').toString('base64') },
    });

    const record = await oneRecord(stack, 'open', 'the Secret’s record');
    expect(record.fields).to.have.length(1);
    expect(record.fields[0]).to.deep.include({
      path: '/data/password',
      desired: null,
      live: null,
      withheld: true,
      manager: 'drift-test-hand',
    });
    const text = JSON.stringify(record);
    for (const value of ['live-password', 'desired-password'])
      expect(text).to.not.include(Buffer.from(value).toString('base64')).and.not.include(value);
  });

  it('accepting a record as an override keeps the live value: the agent is served and applies it, and it is no drift any more', async () => {
    const stack = await appliedStack({ mode: 'report' }, namespace('drift-keep'), deploymentYaml('drift-keep', 'web'));
    const path = deploymentPath('drift-keep', 'web');
    await scale('drift-keep', 'web', 4, 'drift-test-scaler');
    const record = await oneRecord(stack, 'open', 'the scaled Deployment’s record');
    const accepted = await broker.admin.post(`/drift/${record.id}/accept`, { scope: 'override' });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);

    // The agent applies its new render: its own apply owns /spec/replicas again, at the live value.
    await eventually(
      async () => {
        const live = await kubectl.get<{
          spec: { replicas: number };
          metadata: { managedFields: { manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[] };
        }>(`${path}?showManagedFields=true`);
        const owner = live!.metadata.managedFields.find((m) => m.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined)?.manager;
        return owner === 'brokkr-agent' && live!.spec.replicas === 4;
      },
      { timeoutMs: 60_000, what: 'the agent applying the render that keeps 4 replicas' },
    );
    await patchAs('drift-test-canary', path, { metadata: { labels: { tier: 'hacked' } } });
    const canary = await eventually(
      async () => {
        const open = await records(stack, { state: 'open' });
        return open.length === 1 && open[0]!.id !== record.id ? open[0] : undefined;
      },
      { timeoutMs: 60_000, what: 'one open record, of the canary' },
    );
    expect(canary.fields.map((f) => f.path)).to.deep.equal(['/metadata/labels/tier']);
    expect(await liveReplicas('drift-keep', 'web')).to.equal(4);
  });

  it('accepting a record makes an ignore rule the agent follows at once: the same change again is no drift', async () => {
    const stack = await appliedStack({ mode: 'report' }, namespace('drift-accept'), deploymentYaml('drift-accept', 'web'));
    await scale('drift-accept', 'web', 3, 'drift-test-scaler');
    const record = await oneRecord(stack, 'open', 'the scaled Deployment’s record');
    expect((await broker.admin.post(`/drift/${record.id}/accept`, {})).status).to.equal(200);

    await scale('drift-accept', 'web', 6, 'drift-test-scaler');
    await patchAs('drift-test-canary', deploymentPath('drift-accept', 'web'), { metadata: { labels: { tier: 'hacked' } } });
    // The rule reaches the agent with its grants; until it has, the replicas may show up once more beside the canary.
    const canary = await eventually(
      async () => {
        const open = await records(stack, { state: 'open' });
        return open.length === 1 && open[0]!.fields.map((f) => f.path).join() === '/metadata/labels/tier' ? open[0] : undefined;
      },
      { timeoutMs: 60_000, what: 'one open record, of the canary only' },
    );
    expect(canary.id).to.not.equal(record.id);
    expect(await liveReplicas('drift-accept', 'web')).to.equal(6);
    expect((await records(stack, { state: 'accepted' })).map((r) => r.id)).to.deep.equal([record.id]);
  });
});
