import { mock } from 'node:test';
import { expect } from 'chai';
import { createLogger } from '@brokkr/logger';
import type { BrokerClient } from '../src/broker/client.ts';
import type { DeploymentObject } from '../src/broker/types.ts';
import { createAgentMetrics } from '../src/metrics.ts';
import { jittered, TargetWatcher } from '../src/runtime/target-watcher.ts';

/**
 * The target-state loop's pacing, against a broker that answers at once and counts requests.
 * While the agent channel is up, a fleet of connected agents must stay quiet: hints say when to
 * fetch, and only a slow resync covers a lost hint.
 */
describe('agent target watcher', () => {
  /** A watcher on `broker`; the channel is up unless `channelUp` says otherwise. */
  function watcherOn(
    broker: Pick<BrokerClient, 'targetState'>,
    options: { channelUp: boolean; pollingIntervalMs?: number; onState?: (objects: DeploymentObject[]) => void },
  ) {
    return new TargetWatcher({
      broker: broker as BrokerClient,
      metrics: createAgentMetrics(),
      logger: createLogger({ service: 'agent-test', level: 'silent' }),
      agentId: 'a',
      // A polling interval this short would show up as a stream of requests within milliseconds.
      pollingIntervalMs: options.pollingIntervalMs ?? 1,
      channelResyncMs: 3_600_000,
      longPollWaitSeconds: 0,
      isActive: () => true,
      longPollWanted: () => !options.channelUp,
      onState: options.onState ?? (() => undefined),
    });
  }

  function watcher(channelUp: boolean, pollSeconds?: number) {
    const requests: { etag: string | undefined; waitSeconds: number }[] = [];
    const broker = {
      targetState(req: { etag?: string | undefined; waitSeconds: number }) {
        requests.push({ etag: req.etag, waitSeconds: req.waitSeconds });
        return Promise.resolve({ changed: false as const, etag: '"ts-1"', ...(pollSeconds ? { pollSeconds } : {}) });
      },
    } as unknown as BrokerClient;
    return { w: watcherOn(broker, { channelUp }), requests };
  }

  const settle = () => new Promise((r) => setTimeout(r, 100));
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setImmediate(r));
  };
  /** A few event-loop turns: whatever the loop does next without waiting on a timer has happened. */
  const turns = async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };
  const POLLING_MS = 10_000;

  it('while the channel is up, fetches only on hints (and on the slow resync), not every polling interval', async () => {
    const { w, requests } = watcher(true);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    try {
      await until(() => requests.length === 1);
      await settle();
      expect(requests, 'no request but the first without a hint').to.have.length(1);
      w.hinted();
      await until(() => requests.length === 2);
      await settle();
      expect(requests).to.have.length(2);
      expect(requests[1]).to.deep.equal({ etag: '"ts-1"', waitSeconds: 0 });
    } finally {
      stop.abort();
      await running;
    }
  });

  it('without the channel, keeps polling at the polling interval', async () => {
    const requests: number[] = [];
    // Answers on the next turn, so a watcher that did not wait would still let the test look.
    const broker = {
      targetState(req: { waitSeconds: number }) {
        requests.push(req.waitSeconds);
        return new Promise((resolve) => setImmediate(() => resolve({ changed: false as const, etag: '"ts-1"' })));
      },
    } as unknown as BrokerClient;
    const w = watcherOn(broker, { channelUp: false, pollingIntervalMs: POLLING_MS });
    // The clock is node:test's: time moves only when the test says so, so the spacing is exact.
    mock.timers.enable({ apis: ['setTimeout'] });
    const stop = new AbortController();
    const running = w.run(stop.signal);
    try {
      await until(() => requests.length === 1);
      for (const next of [2, 3]) {
        await turns();
        mock.timers.tick(POLLING_MS - 1);
        await turns();
        expect(requests, `request ${next} waits out the whole interval`).to.have.length(next - 1);
        mock.timers.tick(1);
        await turns();
        expect(requests, `request ${next} goes out when the interval is up`).to.have.length(next);
      }
      expect(requests, 'plain polls: this broker offers no long-poll').to.deep.equal([0, 0, 0]);
    } finally {
      stop.abort();
      await running;
      mock.timers.reset();
    }
  });

  it('without the channel, polls as often as the hub says (Brokkr-Poll-Interval), not at its own interval', async () => {
    const { w, requests } = watcher(false, 3600);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    try {
      await until(() => requests.length === 1);
      await settle();
      expect(requests, 'the hub asked for one request an hour').to.have.length(1);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('spreads the resync ±20 % around the setting', () => {
    expect(jittered(300_000, () => 0)).to.equal(240_000);
    expect(jittered(300_000, () => 0.5)).to.equal(300_000);
    expect(jittered(300_000, () => 1)).to.equal(360_000);
  });

  describe('target_state_patch frames', () => {
    const object = (stack: string, sequence: number) =>
      ({
        id: `${stack}-${sequence}`,
        stack_id: stack,
        sequence_id: sequence,
        yaml_content: '',
        yaml_checksum: '',
        is_deletion_marker: false,
        created_at: '',
        updated_at: '',
        deleted_at: null,
        submitted_at: '',
      }) as DeploymentObject;

    function patchedWatcher() {
      const requests: (string | undefined)[] = [];
      const states: string[][] = [];
      const broker = {
        targetState(req: { etag?: string | undefined }) {
          requests.push(req.etag);
          return Promise.resolve({ changed: true as const, etag: '"ts-base"', objects: [object('b', 20), object('a', 10)] });
        },
      } as unknown as BrokerClient;
      const w = watcherOn(broker, { channelUp: true, onState: (objects) => states.push(objects.map((o) => o.id)) });
      return { w, requests, states };
    }

    it('applies a patch on top of the state it holds: the new object, newest first, and no request', async () => {
      const { w, requests, states } = patchedWatcher();
      const stop = new AbortController();
      const running = w.run(stop.signal);
      try {
        await until(() => states.length === 1);
        w.patched({ base_etag: '"ts-base"', etag: '"ts-next"', objects: [object('a', 30)] });
        expect(states[1]).to.deep.equal(['a-30', 'b-20']);
        await settle();
        expect(requests, 'only the first fetch').to.deep.equal([undefined]);
        w.hinted();
        await until(() => requests.length === 2);
        expect(requests[1], 'the next fetch asks whether the patched state is current').to.equal('"ts-next"');
      } finally {
        stop.abort();
        await running;
      }
    });

    it('fetches instead when it does not hold the patch’s base, or the patch names a stack it does not hold', async () => {
      const { w, requests, states } = patchedWatcher();
      const stop = new AbortController();
      const running = w.run(stop.signal);
      try {
        await until(() => states.length === 1);
        w.patched({ base_etag: '"ts-other"', etag: '"ts-next"', objects: [object('a', 30)] });
        await until(() => requests.length === 2);
        w.patched({ base_etag: '"ts-base"', etag: '"ts-next"', objects: [object('c', 30)] });
        await until(() => requests.length === 3);
        expect(states.flat(), 'no patched state was used').to.not.include('a-30');
      } finally {
        stop.abort();
        await running;
      }
    });
  });
});
