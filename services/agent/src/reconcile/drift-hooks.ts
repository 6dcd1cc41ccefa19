import type { DeploymentObject } from '../broker/types.ts';
import type { PlannedObject } from './plan.ts';

/**
 * What the reconciler tells drift detection (src/drift/), when it runs: which objects each stack
 * holds as applied, and when the reconciler writes to a stack, so that no drift check of the
 * stack runs against a manifest being replaced.
 */
export interface DriftHooks {
  /** Runs a write to the stack (apply, prune, deletion) with no drift check of it in flight. */
  exclusive<T>(stackId: string, fn: () => Promise<T>): Promise<T>;
  /** The stack's objects as just applied (stamped), before anything of the stack is pruned. */
  applied(d: DeploymentObject, planned: readonly PlannedObject[]): void;
  /** The stack is deleted (its drift is over), or its apply failed (its objects are between versions). */
  forget(stackId: string, deleted: boolean): void;
}
