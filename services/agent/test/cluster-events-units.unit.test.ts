import { expect } from 'chai';
import { ContainerRateLimit } from '../src/cluster-events/rate-limit.ts';
import { stackOf, streamsLogs } from '../src/cluster-events/stack-of.ts';
import { sortableTs, splitTimestamp } from '../src/cluster-events/timestamps.ts';

const STACK = '8ca08a98-2c87-40c6-97af-8a9d817aea7a';

describe('agent cluster events: pure parts', () => {
  it('rate limit: 100 lines per 1 s window per container; one gap with the real count once the window is over', () => {
    const limit = new ContainerRateLimit();
    const t0 = 1_000_000;
    const admitted = Array.from({ length: 130 }, (_, i) => limit.admit(t0 + i)).filter(Boolean).length;
    expect(admitted).to.equal(100);
    expect(limit.takeGap(t0 + 500), 'the window is not over yet').to.equal(undefined);
    expect(limit.takeGap(t0 + 1000)).to.deep.equal({ since: new Date(t0 + 100), dropped: 30 });
    expect(limit.takeGap(t0 + 1001), 'reported once').to.equal(undefined);
    expect(limit.admit(t0 + 1000)).to.equal(true);
  });

  it('rate limit: a gap is reported even when the next window already started', () => {
    const limit = new ContainerRateLimit(2, 1000);
    for (let i = 0; i < 5; i++) limit.admit(i);
    expect(limit.admit(1500)).to.equal(true);
    expect(limit.takeGap(1600)).to.deep.equal({ since: new Date(2), dropped: 3 });
  });

  it('kubelet timestamps: trailing zeros trimmed by the kubelet still sort right; a line keeps its spaces', () => {
    expect(sortableTs('2026-11-24T06:00:05.1Z') > sortableTs('2026-11-24T06:00:05.09Z')).to.equal(true);
    expect(sortableTs('2026-11-24T06:00:05Z') < sortableTs('2026-11-24T06:00:05.000000001Z')).to.equal(true);
    expect(splitTimestamp('2026-11-24T06:00:05.123456789Z  two  spaces')).to.deep.equal({
      ts: '2026-11-24T06:00:05.123456789Z',
      line: ' two  spaces',
    });
    expect(splitTimestamp('no timestamp here')).to.deep.equal({ ts: undefined, line: 'no timestamp here' });
  });

  it('stack marker: annotation or label holding a UUID; stream-logs exactly "true"', () => {
    expect(stackOf({ annotations: { 'k8s.brokkr.io/stack': STACK } })).to.equal(STACK);
    expect(stackOf({ labels: { 'k8s.brokkr.io/stack': STACK.toUpperCase() } })).to.equal(STACK);
    expect(stackOf({ annotations: { 'k8s.brokkr.io/stack': 'payments' } })).to.equal(undefined);
    expect(stackOf(undefined)).to.equal(undefined);
    expect(streamsLogs({ annotations: { 'brokkr.io/stream-logs': 'true' } })).to.equal(true);
    expect(streamsLogs({ annotations: { 'brokkr.io/stream-logs': 'True' } })).to.equal(false);
  });
});
