import type { Logger } from '@brokkr/logger';
import type { DeploymentObject } from '../broker/types.ts';
import type { HealthMonitor } from '../health/monitor.ts';
import type { EventReporter } from '../reconcile/event-reporter.ts';
import type { Reconciler } from '../reconcile/reconciler.ts';
import { backoffDelay, errorMessage, Wakeup } from '../util/async.ts';

export interface ReconcileLoopDeps {
  reconciler: Reconciler;
  events: EventReporter;
  health: HealthMonitor | undefined;
  logger: Logger;
  backoff: { baseMs: number; maxMs: number };
  isActive(): boolean;
}

/** The longest the loop sleeps without a reason, so a clock jump or a lost wake-up heals itself. */
const MAX_SLEEP_MS = 30_000;

/**
 * Runs reconcile passes one at a time: when a new target state arrives, when a stack is due
 * (resync, retry after failure) and after a pass that could not list the cluster (with backoff).
 * An INACTIVE agent never reconciles.
 */
export class ReconcileLoop {
  private desired: DeploymentObject[] | undefined;
  private listingChanged = false;
  private failures = 0;
  private retryAt = 0;
  private readonly wake = new Wakeup();

  constructor(private readonly deps: ReconcileLoopDeps) {}

  offer(objects: DeploymentObject[]): void {
    this.desired = objects;
    this.listingChanged = true;
    this.wake.notify();
  }

  poke(): void {
    this.wake.notify();
  }

  private sleepMs(): number {
    if (!this.desired || !this.deps.isActive()) return MAX_SLEEP_MS;
    const due = Math.max(this.deps.reconciler.nextDueAt(this.desired), this.retryAt);
    return Math.min(MAX_SLEEP_MS, Math.max(0, due - Date.now()));
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const sleepMs = this.sleepMs();
      if (sleepMs > 0) await this.wake.wait(sleepMs, signal);
      if (signal.aborted) break;
      if (!this.desired || !this.deps.isActive()) continue;
      if (Date.now() < this.retryAt && !this.listingChanged) continue;
      await this.passOnce(this.desired, signal);
    }
  }

  private async passOnce(desired: DeploymentObject[], signal: AbortSignal): Promise<void> {
    const changed = this.listingChanged;
    this.listingChanged = false;
    try {
      await this.deps.reconciler.pass(desired, changed, signal);
      this.failures = 0;
      this.retryAt = 0;
    } catch (err) {
      this.listingChanged ||= changed;
      this.failures++;
      const delay = backoffDelay(this.failures, this.deps.backoff.baseMs, this.deps.backoff.maxMs);
      this.retryAt = Date.now() + delay;
      this.deps.logger.warn({ err: errorMessage(err), retryInMs: delay }, 'reconcile pass failed');
    }
    await this.deps.events.flush();
    this.deps.health?.track(this.deps.reconciler.tracked(desired));
  }
}
