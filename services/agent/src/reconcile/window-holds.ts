import type { WindowGate as Gate } from '@brokkr/contracts';
import type { DeploymentObject } from '../broker/types.ts';
import type { WindowGate } from '../maintenance/window-gate.ts';

/**
 * The reconciler's side of the maintenance windows: which objects a window holds back and until
 * when the reconcile loop may sleep on them (the window's next boundary, so a version goes out
 * when its window opens, not a poll later). A new schedule forgets every hold (clear()).
 */
export class WindowHolds {
  private readonly held = new Map<string, number>();

  constructor(private readonly gate: WindowGate | undefined) {}

  clear(): void {
    this.held.clear();
  }

  /** When a held object is due again (Infinity: only a new schedule frees it); undefined: not held. */
  heldUntil(d: DeploymentObject, now: number): number | undefined {
    const until = this.held.get(d.id);
    return until !== undefined && until > now ? until : undefined;
  }

  /** True when a window holds the change back now; a held version or deletion is reported once. */
  hold(d: DeploymentObject, gate: Gate, now: number): boolean {
    if (!this.gate) return false;
    const decision = this.gate.decide(gate, d.stack_id, now);
    if (!decision.blocked) {
      this.held.delete(d.id);
      return false;
    }
    this.held.set(d.id, decision.recheckAt ?? Number.POSITIVE_INFINITY);
    if (gate !== 'drift_correction') this.gate.report(d, decision);
    return true;
  }

  /** Whether the stack may be pruned now; when not, the instant to look again (Infinity: at the next schedule). */
  pruneHeldUntil(stackId: string, now: number): number | undefined {
    if (!this.gate) return undefined;
    const decision = this.gate.decide('prune', stackId, now);
    return decision.blocked ? (decision.recheckAt ?? Number.POSITIVE_INFINITY) : undefined;
  }

  forget(keep: Set<string>): void {
    for (const id of this.held.keys()) if (!keep.has(id)) this.held.delete(id);
  }
}
