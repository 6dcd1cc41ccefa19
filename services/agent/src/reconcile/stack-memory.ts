import type { DeploymentObject } from '../broker/types.ts';
import { backoffDelay } from '../util/async.ts';

interface StackState {
  objectId: string;
  checksum: string;
  ok: boolean;
  /** When the last attempt ended. */
  at: number;
  failures: number;
  retryAt: number;
  error?: string;
}

export interface Timing {
  resyncIntervalMs: number;
  /**
   * false: a stack applied successfully is not applied again until it changes (drift detection
   * checks it instead, by its policy); true: every resync interval, as before drift detection.
   */
  resyncStacks?: boolean;
  backoff: { baseMs: number; maxMs: number };
}

/**
 * What the agent last did per stack, in memory only: after a restart every stack is simply due
 * again (a server-side apply of unchanged objects is a no-op). It answers "is this stack due?":
 * a new deployment object, a failure whose backoff ran out, or a resync interval gone by.
 */
export class StackMemory {
  private readonly stacks = new Map<string, StackState>();

  constructor(private readonly timing: Timing) {}

  private current(d: DeploymentObject): StackState | undefined {
    const s = this.stacks.get(d.stack_id);
    return s && s.objectId === d.id && s.checksum === d.yaml_checksum ? s : undefined;
  }

  dueAt(d: DeploymentObject): number {
    const s = this.current(d);
    if (!s) return 0;
    if (!s.ok) return s.retryAt;
    return this.timing.resyncStacks === false ? Infinity : s.at + this.timing.resyncIntervalMs;
  }

  isDue(d: DeploymentObject, now: number): boolean {
    return this.dueAt(d) <= now;
  }

  /** The same deployment object already applied successfully (so a new apply is a resync). */
  isApplied(d: DeploymentObject): boolean {
    return this.current(d)?.ok === true;
  }

  succeeded(d: DeploymentObject, at = Date.now()): void {
    this.stacks.set(d.stack_id, { objectId: d.id, checksum: d.yaml_checksum, ok: true, at, failures: 0, retryAt: 0 });
  }

  /**
   * The stack's apply stopped after a wave that is not healthy yet (reconcile/wave-progress.ts):
   * neither applied nor failed, it is due again in `retryInMs` to go on.
   */
  waiting(d: DeploymentObject, retryInMs: number, at = Date.now()): void {
    this.stacks.set(d.stack_id, { objectId: d.id, checksum: d.yaml_checksum, ok: false, at, failures: 0, retryAt: at + retryInMs });
  }

  /** Schedules the retry; `repeated` says the previous attempt failed the same way (not worth a warning again). */
  failed(d: DeploymentObject, error: string, at = Date.now()): { retryInMs: number; repeated: boolean } {
    const previous = this.current(d);
    const failures = (previous?.failures ?? 0) + 1;
    const retryInMs = backoffDelay(failures, this.timing.backoff.baseMs, this.timing.backoff.maxMs);
    this.stacks.set(d.stack_id, { objectId: d.id, checksum: d.yaml_checksum, ok: false, at, failures, retryAt: at + retryInMs, error });
    return { retryInMs, repeated: previous?.ok === false && previous.error === error };
  }

  retain(stackIds: Set<string>): void {
    for (const id of this.stacks.keys()) if (!stackIds.has(id)) this.stacks.delete(id);
  }
}
