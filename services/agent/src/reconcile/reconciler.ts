import type { Logger } from '@brokkr/logger';
import type { GrantBook } from '../grants/book.ts';
import type { DeploymentObject } from '../broker/types.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import { backoffDelay } from '../util/async.ts';
import { applyStack } from './apply-stack.ts';
import type { DriftHooks } from './drift-hooks.ts';
import { eventMessage } from './errors.ts';
import type { EventReporter } from './event-reporter.ts';
import { takeInventory, type Inventory, type LiveObject } from './inventory.ts';
import { deleteObjects, keepSharedNamespaces, removable, staleObjects, wasAdopted } from './prune.ts';
import { StackMemory, type Timing } from './stack-memory.ts';
import type { WindowGate } from '../maintenance/window-gate.ts';
import { WindowHolds } from './window-holds.ts';
import { WAVE_RECHECK_MS, WaveProgress, type WaveWait } from './wave-progress.ts';

export interface ReconcilerDeps extends Timing {
  objects: KubeObjects;
  discovery: Discovery;
  events: EventReporter;
  metrics: AgentMetrics;
  logger: Logger;
  agentId: string;
  watchNamespace: string | undefined;
  concurrency: number;
  crdEstablishedTimeoutMs: number;
  /** A stack's manifest may adopt a live object no stack manages, where its grant allows it (reconcile/ownership.ts). */
  adoptionEnabled: boolean;
  /** What each generator may place on this cluster (kept in step with the target state by the watcher). */
  grants: GrantBook;
  tenantPodSecurity: 'privileged' | 'baseline' | 'restricted';
  /**
   * Asked right before deleting stacks that vanished from the target state: an agent turned
   * INACTIVE gets an empty state, which must not read as "delete everything".
   */
  confirmActive(): Promise<boolean>;
  /** With a trust policy: a stack the hub stops listing (or whose object was refused) keeps its objects (src/trust/gate.ts). */
  keepsVanished?: (stackId: string) => boolean;
  /** Drift detection, when it runs (BROKKR__AGENT__DRIFT_ENABLED): told what each stack holds and when a stack is written. */
  drift?: DriftHooks | undefined;
  /** The maintenance windows (docs/maintenance-windows.md): what may change now; none: everything may. */
  windows?: WindowGate | undefined;
  /** In-stack waves: how long a wave may take to become healthy, and the readiness grace of its pods (reconcile/wave-progress.ts). */
  waves?: { timeoutMs: number; readinessGraceMs: number };
}

/** Without drift detection, a write needs no exclusion. */
const NO_DRIFT: DriftHooks = { exclusive: (_stack, fn) => fn(), applied: () => undefined, forget: () => undefined };

/**
 * Desired state (the broker's full target state) against actual state (what the cluster holds
 * under our owner label), per stack: apply what is new, failed and due, or due for a resync;
 * prune leftovers of earlier versions; delete stacks that carry a deletion marker or vanished
 * from a successful listing.
 */
export class Reconciler {
  private readonly memory: StackMemory;
  private readonly drift: DriftHooks;
  private readonly waves: WaveProgress;
  private vanishedCheckAt = 0;
  private vanishedFailures = 0;
  private readonly holds: WindowHolds;

  constructor(private readonly deps: ReconcilerDeps) {
    this.memory = new StackMemory(deps);
    this.drift = deps.drift ?? NO_DRIFT;
    this.holds = new WindowHolds(deps.windows);
    // A new schedule (it comes with the grants) may open what was held: look again at once.
    deps.grants.onRefresh(() => {
      this.holds.clear();
      this.vanishedCheckAt = 0;
    });
    this.waves = new WaveProgress({ ...deps, ...(deps.waves ?? { timeoutMs: 300_000, readinessGraceMs: 60_000 }) });
  }

  /** When the next pass has something to do (0 = now); an object a window holds is due when the window may open. */
  nextDueAt(desired: DeploymentObject[]): number {
    const now = Date.now();
    return Math.min(this.vanishedCheckAt, ...desired.map((d) => this.holds.heldUntil(d, now) ?? this.memory.dueAt(d)));
  }

  /** Deployment objects applied successfully and still desired: the ones health is reported for. */
  tracked(desired: DeploymentObject[]): string[] {
    return desired.filter((d) => !d.is_deletion_marker && this.memory.isApplied(d)).map((d) => d.id);
  }

  /**
   * One pass. `listingChanged` says the broker answered with a new target state since the last
   * pass, which is when stacks can have vanished. Throws only when the cluster cannot be listed.
   */
  async pass(desired: DeploymentObject[], listingChanged: boolean, signal?: AbortSignal): Promise<boolean> {
    const started = Date.now();
    const due = desired.filter((d) => this.memory.isDue(d, started) && this.holds.heldUntil(d, started) === undefined);
    const checkVanished = listingChanged || started >= this.vanishedCheckAt;
    if (!due.length && !checkVanished) return false;
    let result = 'error';
    try {
      result = (await this.work(desired, due, checkVanished, signal)) ? 'success' : 'failure';
      return true;
    } finally {
      const seconds = (Date.now() - started) / 1000;
      this.deps.metrics.reconcileDuration.observe({ result }, seconds);
      this.deps.logger.debug({ seconds, due: due.length, checkVanished, result }, 'reconcile pass');
    }
  }

  /** False when some stack failed (it is retried with backoff). */
  private async work(desired: DeploymentObject[], due: DeploymentObject[], checkVanished: boolean, signal?: AbortSignal): Promise<boolean> {
    const inventory = await takeInventory(this.deps);
    if (inventory.failures.length) {
      this.deps.logger.debug(
        { count: inventory.failures.length, first: inventory.failures.slice(0, 3) },
        'some resource types could not be listed',
      );
    }
    if (checkVanished) await this.removeVanished(desired, inventory);
    for (const d of desired) if (!due.includes(d) && this.liveDiffers(d, inventory)) due.push(d);
    let allOk = true;
    for (const d of due) {
      if (signal?.aborted) break;
      if (this.holds.hold(d, this.gateOf(d), Date.now())) continue;
      const ok = d.is_deletion_marker ? await this.deleteMarked(d, inventory) : await this.applyOne(d, inventory);
      allOk &&= ok;
    }
    this.retain(desired, inventory);
    return allOk;
  }

  /** What applying the object would be: a deletion prunes, a version applied before is a drift correction, else a new version. */
  private gateOf(d: DeploymentObject): 'prune' | 'drift_correction' | 'new_versions' {
    if (d.is_deletion_marker) return 'prune';
    return this.memory.isApplied(d) ? 'drift_correction' : 'new_versions';
  }

  /** Live objects of a stack with another checksum than the desired one mean it needs applying. */
  private liveDiffers(d: DeploymentObject, inventory: Inventory): boolean {
    if (d.is_deletion_marker) return false;
    return removable(inventory.byStack.get(d.stack_id) ?? []).some((o) => o.checksum !== d.yaml_checksum);
  }

  private async applyOne(d: DeploymentObject, inventory: Inventory): Promise<boolean> {
    const live = inventory.byStack.get(d.stack_id) ?? [];
    const resync = this.memory.isApplied(d);
    const eventType = live.some((o) => o.checksum !== d.yaml_checksum) ? 'UPDATED' : 'APPLIED';
    const log = this.deps.logger.child({ stack: d.stack_id, deploymentObject: d.id });
    try {
      const { applied, pruned } = await this.drift.exclusive(d.stack_id, async () => {
        const applied = await applyStack({ ...this.deps, inventory, waves: this.waves.gate(d) }, d);
        if (applied.waiting) return { applied, pruned: 0 };
        this.drift.applied(d, applied.planned);
        const pruneHeld = this.holds.pruneHeldUntil(d.stack_id, Date.now()) !== undefined;
        const stale = pruneHeld
          ? []
          : keepSharedNamespaces(staleObjects(live, d.yaml_checksum, applied.uids, applied.namespaces), inventory, d.stack_id);
        return { applied, pruned: await deleteObjects(this.deps, stale, this.releaser(d.stack_id)) };
      });
      if (applied.waiting) return this.waitForWave(d, applied.waiting);
      this.waves.done(d.stack_id);
      this.memory.succeeded(d);
      if (resync) for (const kind of applied.changed) this.deps.metrics.driftCorrections.inc({ kind });
      if (!resync || applied.changed.length || pruned) {
        log.info({ objects: applied.planned.length, changed: applied.changed.length, pruned, resync }, 'deployment object applied');
      }
      this.deps.events.report(d.id, eventType, 'SUCCESS');
      return true;
    } catch (err) {
      this.drift.forget(d.stack_id, false);
      const message = eventMessage(err);
      const { retryInMs, repeated } = this.memory.failed(d, message);
      log[repeated ? 'debug' : 'warn']({ err: message, retryInMs }, 'deployment object failed');
      this.deps.events.report(d.id, eventType, 'FAILURE', message);
      return false;
    }
  }

  /** The stack's apply stopped after a wave not healthy yet: no event, no prune; it goes on soon. */
  private waitForWave(d: DeploymentObject, waiting: WaveWait): boolean {
    this.drift.forget(d.stack_id, false);
    this.memory.waiting(d, WAVE_RECHECK_MS);
    const { wave, notReady, first } = waiting;
    this.deps.logger[first ? 'info' : 'debug'](
      { stack: d.stack_id, deploymentObject: d.id, wave, notReady },
      'waiting for a wave to become healthy',
    );
    return true;
  }

  private async deleteMarked(d: DeploymentObject, inventory: Inventory): Promise<boolean> {
    const live = keepSharedNamespaces(removable(inventory.byStack.get(d.stack_id) ?? []), inventory, d.stack_id);
    try {
      this.drift.forget(d.stack_id, true);
      const deleted = await this.drift.exclusive(d.stack_id, () => deleteObjects(this.deps, live, this.releaser(d.stack_id)));
      if (deleted) this.deps.logger.info({ stack: d.stack_id, deleted }, 'stack deleted (deletion marker)');
      this.memory.succeeded(d);
      this.deps.events.report(d.id, 'DELETED', 'SUCCESS');
      return true;
    } catch (err) {
      const message = eventMessage(err);
      const { repeated } = this.memory.failed(d, message);
      if (!repeated) this.deps.logger.warn({ stack: d.stack_id, err: message }, 'deleting a stack failed');
      this.deps.events.report(d.id, 'DELETED', 'FAILURE', message);
      return false;
    }
  }

  /** Stacks we hold objects of that the (successful) listing no longer mentions. */
  private async removeVanished(desired: DeploymentObject[], inventory: Inventory): Promise<void> {
    const wanted = new Set(desired.map((d) => d.stack_id));
    const now = Date.now();
    let heldUntil = Number.POSITIVE_INFINITY;
    const pruneAllowed = (stack: string) => {
      const until = this.holds.pruneHeldUntil(stack, now);
      if (until !== undefined) heldUntil = Math.min(heldUntil, until);
      return until === undefined;
    };
    const vanished = [...inventory.byStack.entries()]
      .filter(([stack]) => !wanted.has(stack) && !this.deps.keepsVanished?.(stack) && pruneAllowed(stack))
      .map(([stack, live]) => ({ stack, live: keepSharedNamespaces(removable(live), inventory, stack) }))
      .filter((v) => v.live.length > 0);
    let failed = false;
    if (vanished.length && !(await this.deps.confirmActive())) {
      this.deps.logger.warn({ stacks: vanished.map((v) => v.stack) }, 'not deleting vanished stacks: the agent is not ACTIVE');
      vanished.length = 0;
    }
    for (const { stack, live } of vanished) {
      const ids = [...new Set(live.flatMap((o) => (o.objectId ? [o.objectId] : [])))];
      try {
        this.drift.forget(stack, true);
        const deleted = await this.drift.exclusive(stack, () => deleteObjects(this.deps, live, this.releaser(stack)));
        this.deps.logger.info({ stack, deleted }, 'stack no longer targeted: its objects were deleted');
        for (const id of ids) this.deps.events.report(id, 'DELETED', 'SUCCESS');
      } catch (err) {
        failed = true;
        for (const id of ids) this.deps.events.report(id, 'DELETED', 'FAILURE', eventMessage(err));
      }
    }
    this.vanishedFailures = failed ? this.vanishedFailures + 1 : 0;
    this.vanishedCheckAt = Math.min(
      heldUntil,
      Date.now() +
        (failed ? backoffDelay(this.vanishedFailures, this.deps.backoff.baseMs, this.deps.backoff.maxMs) : this.deps.resyncIntervalMs),
    );
  }

  /**
   * Which of a stack's objects are given back rather than deleted: those it adopted, unless its
   * grant says delete_adopted (a stack the grants no longer name keeps the safe default).
   */
  private releaser(stackId: string): (o: LiveObject) => boolean {
    const deleteAdopted = this.deps.grants.grantFor(stackId)?.delete_adopted === true;
    return (o) => wasAdopted(o) && !deleteAdopted;
  }

  private retain(desired: DeploymentObject[], inventory: Inventory): void {
    this.memory.retain(new Set(desired.map((d) => d.stack_id)));
    this.waves.retain(new Set(desired.filter((d) => !d.is_deletion_marker).map((d) => d.stack_id)));
    const ids = new Set(desired.map((d) => d.id));
    this.holds.forget(ids);
    for (const live of inventory.byStack.values()) for (const o of live) if (o.objectId) ids.add(o.objectId);
    this.deps.events.retain(ids);
  }
}
