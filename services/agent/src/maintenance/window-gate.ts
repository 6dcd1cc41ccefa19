import { gateDecision, scheduleBoundary, type GateDecision } from '@brokkr/grants';
import type { WindowGate as Gate } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { DeploymentObject } from '../broker/types.ts';
import type { GrantBook } from '../grants/book.ts';
import type { EventReporter } from '../reconcile/event-reporter.ts';

/** setTimeout's longest delay is about 24.8 days; a boundary further away is re-armed hourly. */
const MAX_TIMER_MS = 3_600_000;

export interface WindowGateDeps {
  grants: GrantBook;
  events: EventReporter;
  logger: Logger;
  /** The clock the windows are read with (tests may pass another). */
  now?: () => number;
}

/**
 * The agent's own enforcement of its maintenance windows (docs/maintenance-windows.md): before it
 * applies a version, corrects drift, prunes or runs a work order, it asks the schedule it was last
 * served, evaluated with its own clock. The schedule travels in the grants and the book keeps the
 * last one it got, so a hub that stops answering, or answers without a schedule, opens nothing.
 */
export class WindowGate {
  private readonly now: () => number;
  private readonly turnListeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: WindowGateDeps) {
    this.now = deps.now ?? Date.now;
    deps.grants.holdCorrections((stackId) => this.decide('drift_correction', stackId).blocked);
    deps.grants.onRefresh(() => this.arm());
    this.arm();
  }

  /**
   * Called at every boundary of the schedule (a window opening or closing, a bypass expiring), when
   * what is held may change without a new schedule: drift detection looks again at the stacks
   * whose corrections it held, the work-order loop asks for orders at once.
   */
  onTurn(listener: () => void): void {
    this.turnListeners.add(listener);
  }

  private arm(): void {
    clearTimeout(this.timer);
    const now = this.now();
    const next = scheduleBoundary(this.deps.grants.maintenance(), now);
    if (next === undefined) return;
    // A few milliseconds past the boundary, so the window reads as turned; long waits are re-armed.
    this.timer = setTimeout(
      () => {
        for (const listener of this.turnListeners) listener();
        this.arm();
      },
      Math.min(Math.max(0, next - now) + 5, MAX_TIMER_MS),
    );
    this.timer.unref();
  }

  /** Whether the change may happen now, and if not, which window holds it and until when. */
  decide(gate: Gate, stackId?: string, now = this.now()): GateDecision {
    const generatorId = stackId ? this.deps.grants.generatorOf(stackId) : undefined;
    return gateDecision(this.deps.grants.maintenance(), gate, { stackId, generatorId }, now);
  }

  /** Work orders are gated by the windows that speak for the whole agent. */
  allows(gate: Gate): boolean {
    return !this.decide(gate).blocked;
  }

  /**
   * Tells the hub once per held version (the reporter repeats no outcome for an object): an
   * event `window_blocked` with status BLOCKED naming the stack, the window and when it opens next.
   */
  report(d: DeploymentObject, decision: GateDecision): void {
    const opens = decision.opensAt === undefined ? 'no occurrence ahead' : new Date(decision.opensAt).toISOString();
    const w = decision.window;
    const message = `stack ${d.stack_id} held by maintenance window "${w?.name}" (${w?.id}, ${w?.type}); next open: ${opens}`;
    this.deps.events.report(d.id, 'window_blocked', 'BLOCKED', message);
    this.deps.logger.info({ stack: d.stack_id, deploymentObject: d.id, window: w?.id, opens }, 'held by a maintenance window');
  }
}
