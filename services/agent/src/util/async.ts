/** Resolves after `ms`, or at once when the signal aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs `fn` over the items with at most `limit` calls in flight; results keep the input order.
 * Every item is attempted even when some fail, so one bad object does not hide the others' errors.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: 'fulfilled', value: await fn(items[i]!) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Exponential backoff with "equal jitter": half the step is fixed, half random, so retries spread out. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const step = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * A level-triggered wake-up: `notify()` before `wait()` is not lost. Loops use it to sleep until
 * either something happened or a deadline passed.
 */
export class Wakeup {
  private pending = false;
  private waiter: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.waiter?.();
  }

  /** Resolves true when notified, false at the deadline or on abort. */
  async wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (!this.pending && timeoutMs > 0 && !signal?.aborted) {
      const controller = new AbortController();
      const onAbort = () => controller.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = () => controller.abort();
      await sleep(timeoutMs, controller.signal);
      this.waiter = undefined;
      signal?.removeEventListener('abort', onAbort);
    }
    const notified = this.pending;
    this.pending = false;
    return notified;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
