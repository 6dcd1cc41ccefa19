import { expect } from 'chai';
import type { ApiResource } from '../src/kube/discovery.ts';
import type { KubeObject } from '../src/manifest/parse.ts';
import { ReconcileError } from '../src/reconcile/errors.ts';
import type { LiveObject } from '../src/reconcile/inventory.ts';
import { jobVerdict, workloadVerdict } from '../src/reconcile/wave-health.ts';
import { deletionBatches, groupByWave, liveWave, waveOf, wavesOf } from '../src/reconcile/waves.ts';

const WAVE = 'brokkr.io/wave';
const doc = (kind: string, name: string, wave?: string): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace: 'demo', ...(wave === undefined ? {} : { annotations: { [WAVE]: wave } }) },
});

const resource = (kind: string, namespaced: boolean, group = ''): ApiResource =>
  ({ group, version: 'v1', apiVersion: group ? `${group}/v1` : 'v1', kind, plural: `${kind.toLowerCase()}s`, namespaced }) as ApiResource;
const live = (kind: string, name: string, options: { wave?: string; namespaced?: boolean; group?: string } = {}): LiveObject => ({
  resource: resource(kind, options.namespaced ?? true, options.group),
  meta: { name, uid: name, ...(options.wave === undefined ? {} : { annotations: { [WAVE]: options.wave } }) },
  stackId: 's',
  checksum: 'c',
  objectId: 'o',
});
const names = (batches: LiveObject[][]) => batches.map((b) => b.map((o) => o.meta.name));

/** In-stack waves (reconcile/waves.ts): the annotation, the apply order, the deletion order; end to end in rollouts.e2e.test.ts ("in-stack waves"). */
describe('agent in-stack waves: parsing, grouping, ordering', () => {
  it('reads the wave annotation as an integer, negative allowed, 0 when absent', () => {
    expect(waveOf(doc('ConfigMap', 'a'))).to.equal(0);
    expect(waveOf(doc('ConfigMap', 'a', '3'))).to.equal(3);
    expect(waveOf(doc('ConfigMap', 'a', '-2'))).to.equal(-2);
    expect(waveOf(doc('ConfigMap', 'a', ' +1 '))).to.equal(1);
    expect(Object.is(waveOf(doc('ConfigMap', 'a', '-0')), 0)).to.equal(true);
  });

  it('refuses a wave that is not an integer, naming the object', () => {
    for (const bad of ['1.5', 'one', '', '1e3', '99999999999999999999']) {
      expect(() => waveOf(doc('ConfigMap', 'app', bad)), bad).to.throw(`ConfigMap 'demo/app': annotation ${WAVE} must be an integer`);
    }
  });

  it('reports every bad annotation of a manifest together, before anything is applied', () => {
    const docs = [doc('ConfigMap', 'a', 'x'), doc('Secret', 'b', '1'), doc('Service', 'c', '2.0')];
    let caught: unknown;
    try {
      wavesOf(docs);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(ReconcileError);
    expect((caught as ReconcileError).message).to.match(/^invalid wave annotation; nothing was applied:/);
    expect((caught as ReconcileError).lines).to.have.length(2);
    expect((caught as ReconcileError).lines[0]).to.contain("ConfigMap 'demo/a'");
    expect((caught as ReconcileError).lines[1]).to.contain("Service 'demo/c'");
    expect(wavesOf([doc('ConfigMap', 'a'), doc('Secret', 'b', '-1')])).to.deep.equal([0, -1]);
  });

  it('groups by wave in ascending order, keeping the manifest order within a wave', () => {
    const docs = [doc('ConfigMap', 'app', '1'), doc('Deployment', 'db'), doc('Job', 'migrate', '-1'), doc('Service', 'db')];
    const waves = groupByWave(docs, waveOf);
    expect(waves.map((w) => [w.wave, w.items.map((d) => `${d.kind}/${d.metadata.name}`)])).to.deep.equal([
      [-1, ['Job/migrate']],
      [0, ['Deployment/db', 'Service/db']],
      [1, ['ConfigMap/app']],
    ]);
  });

  it('puts a manifest without wave annotations in one wave (applied as before waves)', () => {
    const waves = groupByWave([doc('ConfigMap', 'a'), doc('Secret', 'b')], waveOf);
    expect(waves).to.have.length(1);
    expect(waves[0]!.wave).to.equal(0);
  });

  it('deletes highest wave first, namespaced before cluster-scoped within a wave, then Namespaces, CRDs last', () => {
    const objects = [
      live('CustomResourceDefinition', 'crd', { namespaced: false, group: 'apiextensions.k8s.io', wave: '5' }),
      live('Namespace', 'ns', { namespaced: false, wave: '9' }),
      live('Deployment', 'db', { group: 'apps' }),
      live('ConfigMap', 'app', { wave: '1' }),
      live('ClusterRole', 'role', { namespaced: false, group: 'rbac.authorization.k8s.io', wave: '1' }),
      live('Job', 'migrate', { group: 'batch', wave: '-1' }),
    ];
    expect(names(deletionBatches(objects))).to.deep.equal([['app'], ['role'], ['db'], ['migrate'], ['ns'], ['crd']]);
  });

  it('deletes as before waves when nothing carries the annotation', () => {
    const objects = [
      live('Namespace', 'ns', { namespaced: false }),
      live('ClusterRole', 'role', { namespaced: false, group: 'rbac.authorization.k8s.io' }),
      live('ConfigMap', 'a'),
      live('Secret', 'b'),
    ];
    expect(names(deletionBatches(objects))).to.deep.equal([['a', 'b'], ['role'], ['ns']]);
  });

  it('counts a live object whose wave annotation was set to a non-integer by hand as wave 0', () => {
    expect(liveWave(live('ConfigMap', 'a', { wave: 'soon' }))).to.equal(0);
    expect(liveWave(live('ConfigMap', 'a', { wave: '2' }))).to.equal(2);
  });

  describe('when a wave is healthy', () => {
    const GRACE = 60_000;
    const rolled = (replicas: number, updated = replicas) => ({
      metadata: { generation: 2 },
      spec: { replicas },
      status: { observedGeneration: 2, updatedReplicas: updated },
    });
    const pod = (phase: string, ready: boolean, waiting?: string) => ({
      metadata: { name: 'p', namespace: 'demo' },
      status: {
        phase,
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString() }],
        containerStatuses: [{ name: 'main', ...(waiting ? { state: { waiting: { reason: waiting } } } : {}) }],
      },
    });

    it('a Deployment: once rolled out and every desired pod is Ready; a Pending pod or a missing one is not yet', () => {
      expect(workloadVerdict('Deployment', rolled(1), [pod('Running', true)], GRACE)).to.deep.equal({ status: 'healthy' });
      expect(workloadVerdict('Deployment', rolled(1), [pod('Pending', false)], GRACE)).to.deep.equal({
        status: 'pending',
        why: '0/1 pods ready',
      });
      expect(workloadVerdict('Deployment', rolled(2), [pod('Running', true)], GRACE)).to.deep.equal({
        status: 'pending',
        why: '1/2 pods ready',
      });
      expect(workloadVerdict('Deployment', rolled(1), [], GRACE).status).to.equal('pending');
    });

    it('a Deployment whose controller has not rolled out the applied spec yet is not healthy, even with Ready pods', () => {
      const behind = { ...rolled(1), status: { observedGeneration: 1, updatedReplicas: 1 } };
      expect(workloadVerdict('Deployment', behind, [pod('Running', true)], GRACE).status).to.equal('pending');
      expect(workloadVerdict('Deployment', rolled(1, 0), [pod('Running', true)], GRACE).status).to.equal('pending');
    });

    it('a Deployment scaled to 0 is healthy at once', () => {
      expect(workloadVerdict('Deployment', rolled(0), [], GRACE)).to.deep.equal({ status: 'healthy' });
    });

    it('a degraded pod fails the wave at once, naming the condition', () => {
      const verdict = workloadVerdict('Deployment', rolled(1), [pod('Running', false, 'CrashLoopBackOff')], GRACE);
      expect(verdict).to.deep.equal({ status: 'failed', why: 'degraded (CrashLoopBackOff; 0/1 pods ready)' });
    });

    it('a pod not Ready past the readiness grace fails the wave (NotReady); within it, not yet', () => {
      expect(workloadVerdict('StatefulSet', rolled(1), [pod('Running', false)], 0).status).to.equal('failed');
      expect(workloadVerdict('StatefulSet', rolled(1), [pod('Running', false)], GRACE).status).to.equal('pending');
    });

    it('a DaemonSet wants as many pods as its controller schedules', () => {
      const ds = { metadata: { generation: 1 }, status: { observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 2 } };
      expect(workloadVerdict('DaemonSet', ds, [pod('Running', true)], GRACE).status).to.equal('pending');
      expect(workloadVerdict('DaemonSet', ds, [pod('Running', true), pod('Running', true)], GRACE).status).to.equal('healthy');
    });

    it('a Job: healthy once complete, failed once failed, else not yet', () => {
      const job = (type?: string) => ({
        metadata: {},
        status: { conditions: type ? [{ type, status: 'True', reason: 'BackoffLimitExceeded' }] : [] },
      });
      expect(jobVerdict(job('Complete'))).to.deep.equal({ status: 'healthy' });
      expect(jobVerdict(job('Failed'))).to.deep.equal({ status: 'failed', why: 'failed (BackoffLimitExceeded)' });
      expect(jobVerdict(job())).to.deep.equal({ status: 'pending', why: 'not complete' });
    });
  });
});
