import { expect } from 'chai';
import { summarizePods, type PodLike } from '../src/index.ts';

const pod = (name: string, status: PodLike['status']): PodLike => ({ metadata: { name, namespace: 'ns' }, status });
const ready = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'True' }],
  containerStatuses: [{ name: 'c', state: { running: {} } }],
};

describe('agent deployment health classification', () => {
  it('is unknown without pods', () => {
    expect(summarizePods([])).to.deep.equal({
      status: 'unknown',
      summary: { pods_ready: 0, pods_total: 0, conditions: [], resources: [] },
    });
  });

  it('is healthy when no container is in trouble, and counts ready pods', () => {
    const result = summarizePods([pod('a', ready), pod('b', ready)]);
    expect(result).to.deep.equal({ status: 'healthy', summary: { pods_ready: 2, pods_total: 2, conditions: [], resources: [] } });
  });

  it('is unknown, not healthy, while a pod has not started (Pending): what waits for this object to be healthy keeps waiting', () => {
    const result = summarizePods([pod('a', ready), pod('b', { phase: 'Pending' })]);
    expect(result).to.deep.equal({ status: 'unknown', summary: { pods_ready: 1, pods_total: 2, conditions: [], resources: [] } });
  });

  it('is degraded for a crash-looping container, with the pod as a resource', () => {
    const crashing = pod('a', {
      phase: 'Running',
      containerStatuses: [{ name: 'c', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } } }],
    });
    const { status, summary } = summarizePods([crashing, pod('b', ready)]);
    expect(status).to.equal('degraded');
    expect(summary.conditions).to.deep.equal(['CrashLoopBackOff']);
    expect(summary.resources).to.deep.equal([{ kind: 'Pod', name: 'a', namespace: 'ns', ready: false, message: 'back-off' }]);
  });

  it('notices OOM kills (current or last state) and failing init containers', () => {
    const oom = pod('a', {
      phase: 'Running',
      containerStatuses: [{ name: 'c', state: { running: {} }, lastState: { terminated: { reason: 'OOMKilled' } } }],
    });
    const init = pod('b', { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'ImagePullBackOff' } } }] });
    const { status, summary } = summarizePods([oom, init]);
    expect(status).to.equal('degraded');
    expect(summary.conditions).to.deep.equal(['InitContainer:ImagePullBackOff', 'OOMKilled']);
  });

  it('is failing for a failed pod, whatever the order of the others (worst wins)', () => {
    const failed = pod('a', { phase: 'Failed' });
    const crashing = pod('b', { phase: 'Running', containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ErrImagePull' } } }] });
    expect(summarizePods([failed, crashing]).status).to.equal('failing');
    expect(summarizePods([crashing, failed]).status).to.equal('failing');
    expect(summarizePods([failed]).summary.conditions).to.deep.equal(['PodFailed']);
  });

  it('is unknown for a pod in phase Unknown unless something is worse', () => {
    expect(summarizePods([pod('a', { phase: 'Unknown' }), pod('b', ready)]).status).to.equal('unknown');
    const crashing = pod('c', { phase: 'Running', containerStatuses: [{ name: 'c', state: { terminated: { reason: 'Error' } } }] });
    expect(summarizePods([pod('a', { phase: 'Unknown' }), crashing]).status).to.equal('degraded');
  });

  it('counts a running pod that is not Ready as unknown within the readiness grace and degraded (NotReady) after it', () => {
    const since = '2026-01-01T00:00:00Z';
    const notReady = pod('a', {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: since }],
      containerStatuses: [{ name: 'c', state: { running: {} } }],
    });
    const at = (seconds: number) => ({ graceMs: 60_000, now: Date.parse(since) + seconds * 1000 });
    expect(summarizePods([notReady, pod('b', ready)], at(30)).status).to.equal('unknown');
    const late = summarizePods([notReady, pod('b', ready)], at(61));
    expect(late.status).to.equal('degraded');
    expect(late.summary).to.deep.include({ pods_ready: 1, pods_total: 2, conditions: ['NotReady'] });
    expect(late.summary.resources).to.deep.equal([{ kind: 'Pod', name: 'a', namespace: 'ns', ready: false }]);
  });

  it('judges a finished pod by its phase, not its readiness', () => {
    const done = pod('a', { phase: 'Succeeded', conditions: [{ type: 'Ready', status: 'False' }] });
    expect(summarizePods([done], { graceMs: 0, now: Date.now() }).status).to.equal('healthy');
  });
});
