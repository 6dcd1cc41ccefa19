import { expect } from 'chai';
import { isSafeManagerPattern, type DriftReportBatch, type EffectiveDriftPolicy } from '@brokkr/contracts';
import { createLogger } from '@brokkr/logger';
import { BrokerError } from '../src/broker/http.ts';
import { addedFields, driftOf, ownedDrift } from '../src/drift/compare.ts';
import { correctionOf } from '../src/drift/correction.ts';
import { pointerOf } from '../src/drift/pointer.ts';
import { deletionIgnored, judge, type ObjectRef } from '../src/drift/policy.ts';
import { DriftReporter } from '../src/drift/reporter.ts';
import type { KubeObject } from '../src/manifest/parse.ts';
import { createAgentMetrics } from '../src/metrics.ts';

/**
 * Drift's pure parts on objects shaped as a kube-apiserver returns them (managedFields included):
 * the comparison, who owns a drifted field, the policy's ignore rules, what a correction applies,
 * and how reports are batched. The end-to-end test (drift.e2e.test.ts) runs them against a real
 * cluster.
 */

const OURS = { manager: 'brokkr-agent', operation: 'Apply', apiVersion: 'apps/v1', time: '2026-11-28T09:00:00Z', fieldsType: 'FieldsV1' };

/** A Deployment the agent applied (replicas 2, one container), as the apiserver holds it after `kubectl scale --replicas=5`. */
function scaledDeployment(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      resourceVersion: '42',
      generation: 3,
      labels: { tier: 'web', 'k8s.brokkr.io/stack': 's' },
      annotations: { 'deployment.kubernetes.io/revision': '1' },
      managedFields: [
        {
          ...OURS,
          fieldsV1: {
            'f:metadata': { 'f:labels': { 'f:tier': {}, 'f:k8s.brokkr.io/stack': {} } },
            'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:name': {}, 'f:image': {} } } } } },
          },
        },
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          time: '2026-11-28T09:00:01Z',
          fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:deployment.kubernetes.io/revision': {} } } },
        },
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          subresource: 'status',
          time: '2026-11-28T09:00:02Z',
          fieldsV1: { 'f:status': {} },
        },
        {
          manager: 'kubectl',
          operation: 'Update',
          subresource: 'scale',
          time: '2026-11-28T09:05:00Z',
          fieldsV1: { 'f:spec': { 'f:replicas': {} } },
        },
      ],
    },
    spec: { replicas: 5, revisionHistoryLimit: 10, template: { spec: { containers: [{ name: 'main', image: 'shop/web:1.0' }] } } },
    status: { replicas: 5, readyReplicas: 2 },
  };
}

/** The dry run of the agent's manifest over it: replicas back to 2, status and bookkeeping as the server has them. */
function dryRunOf(live: Record<string, unknown>): Record<string, unknown> {
  const dry = structuredClone(live) as { spec: { replicas: number }; metadata: { generation: number }; status: unknown };
  dry.spec.replicas = 2;
  dry.metadata.generation = 4;
  dry.status = { replicas: 2 };
  return dry as unknown as Record<string, unknown>;
}

const deploymentRef: ObjectRef = { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' };
const report = (ignore: EffectiveDriftPolicy['ignore'] = []): EffectiveDriftPolicy => ({ mode: 'report', comparison: 'owned', ignore });

describe('drift: the comparison and who did it', () => {
  it('finds the changed field the stack sets, with both values and the manager that owns it now; status and bookkeeping are not drift', () => {
    const live = scaledDeployment();
    const drift = ownedDrift(live, dryRunOf(live));
    expect(drift.map((d) => pointerOf(d.tokens))).to.deep.equal(['/spec/replicas']);
    expect(drift[0]).to.deep.include({ desired: 2, live: 5 });
    expect(drift[0]!.owner).to.deep.equal({ manager: 'kubectl', operation: 'Update', time: '2026-11-28T09:05:00Z' });
  });

  it('names a list item by its key fields: a changed image belongs to whoever owns that container’s image', () => {
    const live = scaledDeployment() as {
      spec: { template: { spec: { containers: { image: string }[] } } };
      metadata: { managedFields: unknown[] };
    };
    live.spec.template.spec.containers[0]!.image = 'shop/web:hotfix';
    live.metadata.managedFields.push({
      manager: 'kubectl-set',
      operation: 'Update',
      time: '2026-11-28T09:06:00Z',
      fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { 'f:image': {} } } } } } },
    });
    const dry = dryRunOf(live as unknown as Record<string, unknown>) as typeof live;
    dry.spec.template.spec.containers[0]!.image = 'shop/web:1.0';
    const drift = ownedDrift(live as unknown as Record<string, unknown>, dry as unknown as Record<string, unknown>);
    const image = drift.find((d) => pointerOf(d.tokens) === '/spec/template/spec/containers/0/image');
    expect(image).to.deep.include({ desired: 'shop/web:1.0', live: 'shop/web:hotfix' });
    expect(image!.owner.manager).to.equal('kubectl-set');
  });

  it('full comparison: a label added by hand is reported once, desired null; the controller’s annotation and status are not', () => {
    const live = scaledDeployment() as { metadata: { labels: Record<string, string>; managedFields: unknown[] } };
    live.metadata.labels['added-by-hand'] = 'yes';
    live.metadata.managedFields.push({
      manager: 'kubectl-edit',
      operation: 'Update',
      time: '2026-11-28T09:07:00Z',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:added-by-hand': {} } } },
    });
    const added = addedFields(live as unknown as Record<string, unknown>);
    const paths = added.map((d) => pointerOf(d.tokens));
    expect(paths).to.include('/metadata/labels/added-by-hand');
    expect(paths).to.not.include('/metadata/annotations/deployment.kubernetes.io~1revision');
    expect(paths.some((p) => p.startsWith('/status'))).to.equal(false);
    const owned = driftOf(live as unknown as Record<string, unknown>, dryRunOf(live as unknown as Record<string, unknown>), 'owned');
    expect(owned.map((d) => pointerOf(d.tokens))).to.deep.equal(['/spec/replicas']);
  });

  it('a removed field has no owner any more', () => {
    const live = scaledDeployment() as {
      metadata: {
        labels: Record<string, string>;
        managedFields: { fieldsV1: { 'f:metadata'?: { 'f:labels'?: Record<string, unknown> } } }[];
      };
    };
    const dry = dryRunOf(live as unknown as Record<string, unknown>);
    // Removed by another writer: the apiserver drops the field from every manager's set.
    delete live.metadata.labels.tier;
    delete live.metadata.managedFields[0]!.fieldsV1['f:metadata']!['f:labels']!['f:tier'];
    const removed = ownedDrift(live as unknown as Record<string, unknown>, dry).find(
      (d) => pointerOf(d.tokens) === '/metadata/labels/tier',
    );
    expect(removed).to.deep.include({ desired: 'web', live: undefined });
    expect(removed!.owner.manager).to.equal(null);
  });
});

describe('drift: the stack policy', () => {
  const live = scaledDeployment();
  const raw = ownedDrift(live, dryRunOf(live));

  it('ignores by object, by JSON pointer (and below, with * for a segment) and by field-manager pattern', () => {
    expect(judge(raw, deploymentRef, report([{ paths: ['/spec/replicas'], managers: ['^kubectl$'] }])).fields).to.deep.equal([]);
    expect(judge(raw, deploymentRef, report([{ paths: ['/spec'] }])).fields).to.deep.equal([]);
    expect(judge(raw, deploymentRef, report([{ paths: ['/*/replicas'] }])).fields).to.deep.equal([]);
    expect(judge(raw, deploymentRef, report([{ target: { kind: 'Deployment', name: 'web' } }])).fields).to.deep.equal([]);
    expect(judge(raw, deploymentRef, report([{ paths: ['/spec/replicas'], managers: ['^hpa-controller$'] }])).fields).to.have.length(1);
    expect(judge(raw, deploymentRef, report([{ target: { name: 'api' } }])).fields).to.have.length(1);
    const kept = judge(raw, deploymentRef, report([{ paths: ['/spec/template'] }]));
    expect(kept.fields[0]).to.deep.include({ path: '/spec/replicas', desired: 2, live: 5, manager: 'kubectl' });
  });

  it('a deleted object is ignored only by a rule for the whole object', () => {
    expect(deletionIgnored([{ target: { kind: 'Deployment' } }], deploymentRef)).to.equal(true);
    expect(deletionIgnored([{ target: { kind: 'Deployment' }, paths: ['/spec/replicas'] }], deploymentRef)).to.equal(false);
    expect(deletionIgnored([{ managers: ['.*'] }], deploymentRef)).to.equal(false);
  });

  it('withholds every value of a Secret and cuts long values', () => {
    const secret = judge(
      [
        {
          tokens: ['data', 'password'],
          desired: 'c2VjcmV0',
          live: 'b3RoZXI=',
          owner: { manager: 'kubectl', operation: 'Update', time: null },
        },
      ],
      { group: '', kind: 'Secret', namespace: 'shop', name: 'db' },
      report(),
    );
    expect(secret.fields).to.deep.equal([
      { path: '/data/password', desired: null, live: null, withheld: true, manager: 'kubectl', operation: 'Update', time: null },
    ]);
    const long = judge(
      [{ tokens: ['data', 'blob'], desired: 'x'.repeat(10_000), live: 'y', owner: { manager: null, operation: null, time: null } }],
      { group: '', kind: 'ConfigMap', namespace: 'shop', name: 'c' },
      report(),
    );
    expect(String(long.fields[0]!.desired).length).to.be.at.most(4097);
  });

  it('a correction leaves out ignored map fields another manager holds, not fields inside lists', () => {
    const manifest: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, template: { spec: { containers: [{ name: 'main', image: 'a' }] } } },
    };
    const judged = judge(raw, deploymentRef, report([{ paths: ['/spec/replicas'], managers: ['^kubectl$'] }]));
    const corrected = correctionOf(manifest, judged.ignored) as unknown as { spec: Record<string, unknown> };
    expect(corrected.spec).to.not.have.property('replicas');
    expect((manifest.spec as { replicas: number }).replicas, 'the manifest itself is untouched').to.equal(2);
    const inList = correctionOf(manifest, [
      {
        tokens: ['spec', 'template', 'spec', 'containers', '0', 'image'],
        desired: 'a',
        live: 'b',
        owner: { manager: 'x', operation: null, time: null },
      },
    ]);
    expect(inList).to.equal(manifest);
  });

  it('accepts manager patterns that cannot explode and refuses those that could', () => {
    for (const ok of ['^hpa-controller$', 'kubectl.*', '^(kubectl|helm)$', '[a-z]+-controller'])
      expect(isSafeManagerPattern(ok), ok).to.equal(true);
    for (const bad of ['(a+)+$', '(a*)*b', '(x|y+)+', '(a)\\1', '(?=a)a', '(?<!b)a', 'x'.repeat(201), '('])
      expect(isSafeManagerPattern(bad), bad).to.equal(false);
  });
});

describe('drift: batched reports', () => {
  const logger = createLogger({ level: 'silent', service: 'test' });
  const episode = (id: string, state: 'open' | 'corrected' = 'open') => ({
    id,
    stack_id: '00000000-0000-4000-8000-000000000001',
    deployment_object_id: null,
    object: { api_version: 'v1', kind: 'ConfigMap', namespace: 'a', name: id },
    state,
    missing: false,
    fields: [],
    observed_at: '2026-11-28T09:00:00.000Z',
  });

  it('sends episodes in order, a later report of an episode replacing one still waiting, and cuts a batch at a sweep marker', async () => {
    const sent: DriftReportBatch[] = [];
    const reporter = new DriftReporter({
      sink: { reportDrift: async (_id, b) => (sent.push(b), {}) },
      agentId: 'a',
      metrics: createAgentMetrics(),
      logger,
    });
    reporter.report(episode('e1'));
    reporter.report(episode('e2'));
    reporter.report(episode('e1', 'corrected'));
    reporter.sweep(['00000000-0000-4000-8000-000000000001'], '2026-11-28T09:00:00.000Z');
    reporter.report(episode('e3'));
    const stop = new AbortController();
    const running = reporter.run(stop.signal);
    while (reporter.pending) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    await running;
    expect(sent.map((b) => [b.reports.map((r) => `${r.id}:${r.state}`), b.sweep !== undefined])).to.deep.equal([
      [['e2:open', 'e1:corrected'], true],
      [['e3:open'], false],
    ]);
  });

  it('stops reporting to a hub that has no drift records (404), and tells which episodes the hub closed', async () => {
    let calls = 0;
    const unsupported = new DriftReporter({
      sink: {
        reportDrift: async () => {
          calls++;
          throw new BrokerError(404, 'not_found', 'POST /api/v1/agents/a/drift → 404');
        },
      },
      agentId: 'a',
      metrics: createAgentMetrics(),
      logger,
    });
    const stop = new AbortController();
    const running = unsupported.run(stop.signal);
    unsupported.report(episode('e1'));
    while (calls === 0 || unsupported.pending) await new Promise((r) => setTimeout(r, 10));
    unsupported.report(episode('e2'));
    expect(unsupported.pending).to.equal(0);
    stop.abort();
    await running;
    expect(calls).to.equal(1);

    const closed: string[] = [];
    const hub = new DriftReporter({
      sink: { reportDrift: async () => ({ closed: ['e9'] }) },
      agentId: 'a',
      metrics: createAgentMetrics(),
      logger,
    });
    hub.onClosed = (ids) => closed.push(...ids);
    const stop2 = new AbortController();
    const running2 = hub.run(stop2.signal);
    hub.report(episode('e9'));
    while (hub.pending) await new Promise((r) => setTimeout(r, 10));
    stop2.abort();
    await running2;
    expect(closed).to.deep.equal(['e9']);
  });
});
