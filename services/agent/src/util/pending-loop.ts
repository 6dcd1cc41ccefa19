import { Wakeup } from './async.ts';

export interface PendingLoopOptions<T> {
  pollingIntervalMs: number;
  isActive(): boolean;
  /** This agent's pending items; `signal` aborts on stop (and on `wake()` when `wakeCutsListing`). */
  list(signal: AbortSignal): Promise<T[]>;
  /** Claims and handles (or starts) one listed item; false when it was not taken (claimed elsewhere, given up). */
  take(item: T, stop: AbortSignal): Promise<boolean>;
  /** A listing failed (not because of a stop or a wake): say so. */
  listFailed(err: unknown): void;
  /** A `wake()` also cuts a listing in flight short (a held long-poll), so the list is read again at once. */
  wakeCutsListing: boolean;
  /** No room to take more now (every slot busy): stop taking and wait for a wake. */
  full?(): boolean;
}

type PassOutcome = 'took' | 'idle' | 'woken' | 'error';

/**
 * The agent's claim loops, spelled once: while the agent is ACTIVE, list this agent's pending
 * items — the broker may hold the listing (long-poll) until one appears — and take each one.
 * A pass that took something, or was woken, looks again at once; otherwise the loop waits out
 * the rest of the polling interval (Brokkr's broker answers at once, so that is its poll period),
 * cut short by `wake()`. What taking means (claim and run, dry-run and report) is the caller's.
 */
export class PendingLoop<T> {
  private readonly wakeup = new Wakeup();
  /** The listing in flight, when a wake may cut it short. */
  private listing: AbortController | undefined;

  constructor(private readonly options: PendingLoopOptions<T>) {}

  /** Look now: a hint (live channel), the agent just became ACTIVE, or a slot came free. */
  wake(): void {
    this.wakeup.notify();
    this.listing?.abort();
  }

  /** Runs until `stop` aborts; a pass in flight finishes the item it is on. */
  async run(stop: AbortSignal): Promise<void> {
    const { pollingIntervalMs, isActive, full } = this.options;
    while (!stop.aborted) {
      if (!isActive() || full?.()) {
        await this.wakeup.wait(pollingIntervalMs, stop);
        continue;
      }
      const started = Date.now();
      const outcome = await this.pass(stop);
      // A held long-poll has already waited: only the rest of the interval is left.
      if (outcome === 'idle' || outcome === 'error') await this.wakeup.wait(pollingIntervalMs - (Date.now() - started), stop);
    }
  }

  private async pass(stop: AbortSignal): Promise<PassOutcome> {
    const listed = await this.list(stop);
    if (typeof listed === 'string') return listed;
    let took = false;
    for (const item of listed) {
      if (stop.aborted || !this.options.isActive() || this.options.full?.()) break;
      if (await this.options.take(item, stop)) took = true;
    }
    return took ? 'took' : 'idle';
  }

  private async list(stop: AbortSignal): Promise<T[] | 'idle' | 'woken' | 'error'> {
    const listing = new AbortController();
    if (this.options.wakeCutsListing) this.listing = listing;
    try {
      return await this.options.list(AbortSignal.any([stop, listing.signal]));
    } catch (err) {
      if (stop.aborted) return 'idle';
      if (listing.signal.aborted) return 'woken';
      this.options.listFailed(err);
      return 'error';
    } finally {
      this.listing = undefined;
    }
  }
}
