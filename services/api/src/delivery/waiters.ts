import { Gauge, type Registry } from '@brokkr/telemetry';

export type WaitOutcome = 'woken' | 'timeout' | 'aborted';

/**
 * When a long-poll holding `waitSeconds` ends (epoch ms). `wait` is "up to": each request is held
 * 80–100 % of it. Agents that connected together (after a restart of the api) would otherwise all
 * come back at the same deadline, every `wait` seconds: with 10,000 of them, a wave of 10,000
 * requests (bench:agents).
 */
export function longPollDeadline(waitSeconds: number, now: number = Date.now()): number {
  return now + waitSeconds * 1000 * (0.8 + 0.2 * Math.random());
}

/** One held request's interest in an agent's notices. */
export interface AgentWatch {
  /**
   * Resolves 'woken' as soon as a notice arrived since the previous call (so one arriving while
   * the caller was recomputing is not lost), else at the first of a notice, `deadline` (epoch ms)
   * or `signal` aborting.
   */
  next(deadline: number, signal: AbortSignal): Promise<WaitOutcome>;
  close(): void;
}

class Watch implements AgentWatch {
  private pending = false;
  private release: (() => void) | undefined;

  constructor(private readonly detach: (w: Watch) => void) {}

  wake(): void {
    this.pending = true;
    this.release?.();
  }

  next(deadline: number, signal: AbortSignal): Promise<WaitOutcome> {
    if (signal.aborted) return Promise.resolve('aborted');
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('woken');
    }
    return new Promise<WaitOutcome>((resolve) => {
      const finish = (outcome: WaitOutcome): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.release = undefined;
        if (outcome === 'woken') this.pending = false;
        resolve(outcome);
      };
      const onAbort = (): void => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()));
      signal.addEventListener('abort', onAbort, { once: true });
      this.release = () => finish('woken');
    });
  }

  close(): void {
    this.release = undefined;
    this.detach(this);
  }
}

/**
 * The requests of this replica held waiting for an agent's state to change (target-state
 * long-polls, pending work orders, diagnostics and previews): the delivery's second stage wakes
 * them. Thousands of idle agents cost one Set entry each.
 */
export class Waiters {
  private readonly waiting = new Map<string, Set<Watch>>();

  /** Register BEFORE reading the state, so a change committed in between still wakes the request. */
  watch(agentId: string): AgentWatch {
    // Keyed like the subjects, by the lower-case UUID (a path may spell it in upper case).
    const key = agentId.toLowerCase();
    const watch = new Watch((w) => {
      const set = this.waiting.get(key);
      set?.delete(w);
      if (set?.size === 0) this.waiting.delete(key);
    });
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    set.add(watch);
    return watch;
  }

  wake(agentId: string): void {
    for (const watch of this.waiting.get(agentId) ?? []) watch.wake();
  }

  /** Requests waiting now (the long-poll gauge). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }
}

/** `brokkr_target_state_long_polls_waiting`: the requests held now. */
export function waitersGauge(registry: Registry, waiters: Waiters): void {
  new Gauge({
    name: 'brokkr_target_state_long_polls_waiting',
    help: 'Long-poll requests of this replica (target state, pending work orders) currently held waiting',
    registers: [registry],
    collect() {
      this.set(waiters.size);
    },
  });
}
