import { expect } from 'chai';
import { createLogger } from '@brokkr/logger';
import type { BrokerClient } from '../src/broker/client.ts';
import type { AgentEventBody } from '../src/broker/types.ts';
import { createAgentMetrics } from '../src/metrics.ts';
import { EventReporter } from '../src/reconcile/event-reporter.ts';

/**
 * The agent's events leave through one queue that the reconcile loop and the heartbeat both
 * flush: each event reaches the hub once, in order, however the flushes overlap.
 */
describe('agent event reporter', () => {
  /** A hub that takes each event only after `release()`: a flush stays in flight until then. */
  function slowHub() {
    const posted: AgentEventBody[] = [];
    const waiting: (() => void)[] = [];
    const broker = {
      postEvent(_agentId: string, body: AgentEventBody) {
        return new Promise<void>((resolve) =>
          waiting.push(() => {
            posted.push(body);
            resolve();
          }),
        );
      },
    } as unknown as BrokerClient;
    const release = async () => {
      while (waiting.length) waiting.shift()!();
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    };
    return { broker, posted, release };
  }

  const reporterOn = (broker: BrokerClient) =>
    new EventReporter(broker, 'agent-1', createAgentMetrics(), createLogger({ service: 'agent-test', level: 'silent' }));

  it('posts an event once when two flushes overlap (the reconcile loop and the heartbeat), and keeps the order', async () => {
    const hub = slowHub();
    const reporter = reporterOn(hub.broker);
    reporter.report('object-1', 'window_blocked', 'BLOCKED', 'held');
    const first = reporter.flush();
    reporter.report('object-2', 'APPLIED', 'SUCCESS');
    const second = reporter.flush();
    for (let i = 0; i < 5; i++) await hub.release();
    await Promise.all([first, second]);
    expect(hub.posted.map((e) => e.deployment_object_id)).to.deep.equal(['object-1', 'object-2']);
    expect(reporter.pending).to.equal(0);
  });

  it('reports an outcome once per object: the same outcome again is not queued', async () => {
    const hub = slowHub();
    const reporter = reporterOn(hub.broker);
    reporter.report('object-1', 'window_blocked', 'BLOCKED', 'held');
    reporter.report('object-1', 'window_blocked', 'BLOCKED', 'held');
    const flushed = reporter.flush();
    for (let i = 0; i < 5; i++) await hub.release();
    await flushed;
    expect(hub.posted).to.have.length(1);
  });
});
