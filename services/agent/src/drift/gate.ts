/**
 * Keeps the drift checks of a stack and the reconciler's writes to it apart: while the reconciler
 * applies or deletes a stack, no check of it runs (it would compare the live objects with the
 * manifest being replaced), and the reconciler starts only once the checks in flight are done.
 */
export class StackGate {
  private readonly writing = new Set<string>();
  private readonly checks = new Map<string, Set<Promise<unknown>>>();

  /** Runs the reconciler's write to the stack once no check of it is in flight; checks wait it out. */
  async exclusive<T>(stackId: string, fn: () => Promise<T>): Promise<T> {
    this.writing.add(stackId);
    try {
      await Promise.allSettled([...(this.checks.get(stackId) ?? [])]);
      return await fn();
    } finally {
      this.writing.delete(stackId);
    }
  }

  busy(stackId: string): boolean {
    return this.writing.has(stackId);
  }

  /** Runs a check of the stack, unless the reconciler is writing to it (then undefined: check again later). */
  async check<T>(stackId: string, fn: () => Promise<T>): Promise<T | undefined> {
    if (this.writing.has(stackId)) return undefined;
    const running = fn();
    const set = this.checks.get(stackId) ?? new Set<Promise<unknown>>();
    set.add(running);
    this.checks.set(stackId, set);
    try {
      return await running;
    } finally {
      set.delete(running);
      if (set.size === 0) this.checks.delete(stackId);
    }
  }
}
