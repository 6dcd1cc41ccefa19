interface Waiter<T> {
  resolve(value: T | undefined): void;
  reject(err: unknown): void;
}

/**
 * Lookups that share statements: one statement runs at a time, and the keys that arrive while it
 * runs wait and go together in the next one (at most `maxBatch` keys each). However many arrive at
 * once, they hold one database connection and cost one round trip per batch, not one each.
 */
export class SharedLookups<T> {
  private waiting = new Map<string, Waiter<T>[]>();
  private running = false;

  constructor(
    private readonly lookUp: (keys: string[]) => Promise<Map<string, T>>,
    private readonly maxBatch = 1000,
  ) {}

  /** What the key is, or undefined when the lookup found nothing; rejects when the lookup failed. */
  get(key: string): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.waiting.set(key, [{ resolve, reject }]);
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.waiting.size > 0) await this.runBatch(this.takeBatch());
    } finally {
      this.running = false;
    }
  }

  private takeBatch(): [string, Waiter<T>[]][] {
    const batch: [string, Waiter<T>[]][] = [];
    for (const entry of this.waiting) {
      if (batch.length >= this.maxBatch) break;
      batch.push(entry);
    }
    for (const [key] of batch) this.waiting.delete(key);
    return batch;
  }

  private async runBatch(batch: [string, Waiter<T>[]][]): Promise<void> {
    try {
      const found = await this.lookUp(batch.map(([key]) => key));
      for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
    } catch (err) {
      for (const [, waiters] of batch) for (const w of waiters) w.reject(err);
    }
  }
}
