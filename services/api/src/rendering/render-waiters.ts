import type { Logger } from '@brokkr/logger';

export interface RenderWait {
  /** true once the job is done, false at the deadline (or when the api stops). */
  done: Promise<boolean>;
  cancel(): void;
}

/**
 * The render jobs this api replica waits on, by job key. The renderer's NOTIFY on
 * `brokkr_render_done` wakes them (`wake`); a look every `pollMs` at the keys still waited on finds
 * results whose wake-up was lost (the LISTEN connection was down when it was sent), and so does a
 * look each time the LISTEN is back. A wait is registered before its job is queued, so no wake-up
 * can come before anyone listens for it.
 */
export class RenderWaiters {
  private readonly waiting = new Map<string, Set<(done: boolean) => void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly findDone: (keys: string[]) => Promise<string[]>,
    private readonly pollMs: number,
    private readonly logger: Logger,
  ) {}

  wait(key: string, deadlineMs: number): RenderWait {
    let settle: (done: boolean) => void = () => undefined;
    const done = new Promise<boolean>((resolve) => (settle = resolve));
    const waiters = this.waiting.get(key) ?? new Set();
    this.waiting.set(key, waiters);
    const deadline = setTimeout(() => finish(false), deadlineMs);
    const finish = (outcome: boolean) => {
      clearTimeout(deadline);
      waiters.delete(finish);
      if (waiters.size === 0 && this.waiting.get(key) === waiters) this.waiting.delete(key);
      settle(outcome);
    };
    waiters.add(finish);
    return { done, cancel: () => finish(false) };
  }

  wake(key: string): void {
    for (const finish of [...(this.waiting.get(key) ?? [])]) finish(true);
  }

  /** Wakes every waiter whose job is done (its wake-up may have been lost). */
  async lookForMissed(): Promise<void> {
    if (this.waiting.size === 0) return;
    try {
      for (const key of await this.findDone([...this.waiting.keys()])) this.wake(key);
    } catch (err) {
      this.logger.warn({ err }, 'looking for finished renders failed; looking again');
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.lookForMissed(), this.pollMs);
    this.timer.unref();
  }

  /** Every wait still open ends as not done: the api is stopping. */
  stop(): void {
    clearInterval(this.timer);
    for (const waiters of [...this.waiting.values()]) for (const finish of [...waiters]) finish(false);
  }
}
