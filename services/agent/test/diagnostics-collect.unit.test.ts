import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort } from '@brokkr/testkit';
import { DiagnosticsBrokerApi } from '../src/diagnostics/broker-api.ts';
import { DiagnosticsCollector } from '../src/diagnostics/collector.ts';
import { eventsAbout, objectKey, type KubeEvent } from '../src/diagnostics/events.ts';
import { keepNewest } from '../src/diagnostics/log-tails.ts';
import { podStatusOf } from '../src/diagnostics/pod-status.ts';
import { KubeClient } from '../src/kube/client.ts';
import { Discovery } from '../src/kube/discovery.ts';
import { KubeObjects } from '../src/kube/objects.ts';

/** The pure parts of a diagnostic result, and the error result when Kubernetes cannot be reached. */
describe('agent diagnostics: what a result holds', () => {
  it("maps a pod to Brokkr's PodStatus: terminated with an exit code, no status at all", () => {
    const terminated = podStatusOf({
      metadata: { name: 'job-1', namespace: 'ci', uid: 'u1' },
      spec: { containers: [{ name: 'main' }] },
      status: {
        phase: 'Failed',
        containerStatuses: [{ name: 'main', ready: false, restartCount: 1, state: { terminated: { reason: 'Error', exitCode: 2 } } }],
      },
    });
    expect(terminated.containers).to.deep.equal([
      { name: 'main', ready: false, restart_count: 1, state: 'Terminated', state_reason: 'Error', state_message: 'exit code 2' },
    ]);
    const bare = podStatusOf({ metadata: { name: 'p', uid: 'u2' } });
    expect(bare).to.deep.equal({ name: 'p', namespace: 'default', phase: 'Unknown', conditions: [], containers: [] });
  });

  it('keeps only events about the subjects, newest first (eventTime when lastTimestamp is null), at most max', () => {
    const ev = (uid: string, last: string | null, eventTime: string | null = null): KubeEvent => ({
      reason: uid,
      involvedObject: { kind: 'Pod', name: `pod-${uid}`, namespace: 'ns', uid },
      lastTimestamp: last,
      eventTime,
    });
    const events = [
      ev('a', '2026-01-01T00:00:01Z'),
      ev('b', null, '2026-01-01T00:00:05.123456Z'),
      ev('x', '2026-01-01T00:00:09Z'),
      ev('c', '2026-01-01T00:00:03Z'),
      { reason: 'named', involvedObject: { kind: 'Service', name: 'web', namespace: 'ns' }, lastTimestamp: '2026-01-01T00:00:04Z' },
    ];
    const subjects = { uids: new Set(['a', 'b', 'c']), objects: new Set([objectKey('Service', 'ns', 'web')]) };
    expect(eventsAbout(events, subjects, 10).map((e) => e.reason)).to.deep.equal(['b', 'named', 'c', 'a']);
    expect(eventsAbout(events, subjects, 2).map((e) => e.reason)).to.deep.equal(['b', 'named']);
  });

  it('keeps the newest bytes of a long log, from a line start, and says how much was cut', () => {
    const log = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    const kept = keepNewest(log, 100);
    expect(kept).to.match(/^\[… \d+ earlier bytes cut\]\n/);
    expect(kept.endsWith('line 999')).to.equal(true);
    expect(Buffer.byteLength(kept.split('\n').slice(1).join('\n'))).to.be.at.most(100);
    expect(keepNewest('short', 100)).to.equal('short');
  });

  it('a Kubernetes API that cannot be reached is reported as the result (Brokkr: events = [{"error": …}]), not thrown', async () => {
    const port = await freePort();
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const kube = await KubeClient.create(config);
    const broker = new DiagnosticsBrokerApi(`http://127.0.0.1:${port}`, 'pak');
    const collector = new DiagnosticsCollector({
      kube,
      objects: new KubeObjects(kube),
      discovery: new Discovery(kube, 1),
      broker,
      watchNamespace: undefined,
      logTails: { lines: 10, bytes: 1000, totalBytes: 10_000 },
      maxEvents: 10,
    });
    try {
      const { body, error } = await collector.collect('6f1c1f4e-3c4e-4d7a-9b8e-2a9f0f6f2b11');
      expect(error)
        .to.be.a('string')
        .and.match(/ECONNREFUSED|connect/);
      expect(body.pod_statuses).to.equal('[]');
      expect(body.log_tails).to.equal(null);
      expect(JSON.parse(body.events)).to.deep.equal([{ error }]);
      expect(Number.isNaN(Date.parse(body.collected_at))).to.equal(false);
    } finally {
      await Promise.all([kube.close(), broker.close()]);
    }
  });
});
