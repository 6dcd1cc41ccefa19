import { expect } from 'chai';
import { PendingLoop, type PendingLoopOptions } from '../src/util/pending-loop.ts';

/**
 * The claim loop the diagnostics, preview and work-order loops share, against a fake broker whose
 * listing is held (a long-poll) until the test answers it. The polling interval is an hour, so
 * every second look in these tests comes from a wake or from a pass that took something.
 */
describe('agent pending loop', () => {
  /** A listing the test answers: each call waits for `answer` (or rejects when its signal aborts). */
  function heldBroker() {
    const calls: { answer(items: string[]): void }[] = [];
    const list = (signal: AbortSignal) =>
      new Promise<string[]>((resolve, reject) => {
        calls.push({ answer: resolve });
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    return { calls, list };
  }

  function start(options: Partial<PendingLoopOptions<string>> & Pick<PendingLoopOptions<string>, 'list'>) {
    const taken: string[] = [];
    const failures: unknown[] = [];
    const loop = new PendingLoop<string>({
      pollingIntervalMs: 3_600_000,
      isActive: () => true,
      take: (item) => (taken.push(item), Promise.resolve(true)),
      listFailed: (err) => failures.push(err),
      wakeCutsListing: true,
      ...options,
    });
    const stop = new AbortController();
    const running = loop.run(stop.signal);
    return { loop, taken, failures, stop: () => (stop.abort(), running) };
  }

  const until = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setImmediate(r));
  };

  it('takes each listed item, then looks again at once; a wake cuts a held listing short without reporting a failure', async () => {
    const broker = heldBroker();
    const { loop, taken, failures, stop } = start({ list: broker.list });
    await until(() => broker.calls.length === 1);
    broker.calls[0]!.answer(['a', 'b']);
    await until(() => broker.calls.length === 2);
    expect(taken).to.deep.equal(['a', 'b']);
    loop.wake();
    await until(() => broker.calls.length === 3);
    expect(failures).to.deep.equal([]);
    await stop();
  });

  it('with wakeCutsListing off, a wake leaves the held listing alone and is remembered for after it', async () => {
    const broker = heldBroker();
    const { loop, taken, stop } = start({ list: broker.list, wakeCutsListing: false });
    await until(() => broker.calls.length === 1);
    loop.wake();
    await new Promise((r) => setImmediate(r));
    expect(broker.calls).to.have.length(1);
    broker.calls[0]!.answer([]);
    await until(() => broker.calls.length === 2);
    expect(taken).to.deep.equal([]);
    await stop();
  });

  it('stops taking when full and lists again only once woken with room', async () => {
    const broker = heldBroker();
    let busy = 0;
    const { loop, taken, stop } = start({
      list: broker.list,
      full: () => busy >= 1,
      take: (item) => (taken.push(item), busy++, Promise.resolve(true)),
    });
    await until(() => broker.calls.length === 1);
    broker.calls[0]!.answer(['a', 'b']);
    await until(() => taken.length === 1);
    expect(taken).to.deep.equal(['a']);
    busy = 0;
    loop.wake();
    await until(() => broker.calls.length === 2);
    broker.calls[1]!.answer(['b']);
    await until(() => taken.length === 2);
    expect(taken).to.deep.equal(['a', 'b']);
    await stop();
  });

  it('lists nothing while the agent is not ACTIVE; a wake after it became ACTIVE lists at once', async () => {
    const broker = heldBroker();
    let active = false;
    const { loop, stop } = start({ list: broker.list, isActive: () => active });
    await new Promise((r) => setImmediate(r));
    expect(broker.calls).to.have.length(0);
    active = true;
    loop.wake();
    await until(() => broker.calls.length === 1);
    await stop();
  });

  it('reports a listing that failed, and waits for a wake before the next look', async () => {
    let calls = 0;
    const { loop, failures, stop } = start({ list: () => (calls++, Promise.reject(new Error('503'))) });
    await until(() => failures.length === 1);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(1);
    loop.wake();
    await until(() => failures.length === 2);
    await stop();
  });
});
