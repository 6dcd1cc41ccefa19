import type { EffectiveDriftPolicy } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObjects, LiveResource } from '../kube/objects.ts';
import { OWNER_LABEL, STACK_LABEL } from '../manifest/keys.ts';
import type { AgentMetrics } from '../metrics.ts';
import { mapLimit, sleep, Wakeup } from '../util/async.ts';
import type { CheckResult, DriftDetector } from './detector.ts';
import { fingerprint, keyOfLive, resourceId, type AppliedObject, type DriftRegistry, type TrackedObject } from './registry.ts';
import type { DriftReporter } from './reporter.ts';
import type { StackGate } from './gate.ts';
import { watchResource, type WatchEventType } from './watch.ts';
import type { ApiResource } from '../kube/discovery.ts';

export interface DriftLoopDeps {
  kube: KubeClient;
  objects: KubeObjects;
  registry: DriftRegistry;
  detector: DriftDetector;
  reporter: DriftReporter;
  gate: StackGate;
  metrics: AgentMetrics;
  logger: Logger;
  agentId: string;
  watchNamespace: string | undefined;
  concurrency: number;
  debounceMs: number;
  /** The period of the full sweep (the resync interval). */
  sweepIntervalMs: number;
  policyFor(stackId: string): EffectiveDriftPolicy;
  isActive(): boolean;
}

/** A check the reconciler held back (its stack was being written) is tried again after this. */
const DEFERRED_RETRY_MS = 1000;

/**
 * Drift detection's moving parts: a watch per resource type the agent applied (its owner label),
 * each change checked once the object has been quiet for the debounce, and a full sweep every
 * resync interval (one listing per type; an object unchanged since its last check costs nothing)
 * that also catches what a watch missed and tells the hub which stacks it covered.
 */
export class DriftLoop {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly due = new Set<string>();
  private readonly wake = new Wakeup();
  private readonly watches = new Map<string, AbortController>();
  private readonly policies = new Map<string, string>();
  private signal: AbortSignal | undefined;

  constructor(private readonly deps: DriftLoopDeps) {}

  /** The stack's objects as just applied: followed from now on; those it dropped close their drift. */
  applied(stackId: string, objectId: string, objects: readonly AppliedObject[]): void {
    const dropped = this.deps.registry.replaceStack(stackId, objectId, objects);
    for (const t of dropped) this.deps.detector.close(t, 'resolved');
    for (const t of this.deps.registry.ofStack(stackId)) if (t.episode || t.seen === undefined) this.schedule(t.key);
    this.policies.set(stackId, JSON.stringify(this.deps.policyFor(stackId)));
    this.changed();
  }

  /** The stack is deleted, or its last apply failed (its live objects are between versions): no longer checked. */
  forget(stackId: string, closeEpisodes: boolean): void {
    for (const t of this.deps.registry.forgetStack(stackId)) if (closeEpisodes) this.deps.detector.close(t, 'resolved');
    this.policies.delete(stackId);
    this.changed();
  }

  /** The grants were read again: stacks whose drift policy changed are checked again whole. */
  policiesRefreshed(): void {
    for (const stackId of this.deps.registry.stackIds()) {
      const policy = JSON.stringify(this.deps.policyFor(stackId));
      if (this.policies.get(stackId) === policy) continue;
      this.policies.set(stackId, policy);
      for (const t of this.deps.registry.ofStack(stackId)) {
        delete t.seen;
        this.schedule(t.key, 0);
      }
    }
  }

  private changed(): void {
    this.deps.metrics.driftWatched.set(this.deps.registry.size);
    if (this.signal) this.syncWatches(this.signal);
  }

  /** A check of the object once it has been quiet for the debounce (a burst of events is one check). */
  schedule(key: string, delayMs = this.deps.debounceMs): void {
    clearTimeout(this.timers.get(key));
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.due.add(key);
      this.wake.notify();
    }, delayMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  private onEvent(resource: ApiResource, type: WatchEventType, object: LiveResource): void {
    const tracked = this.deps.registry.get(keyOfLive(resource, object));
    if (!tracked) return;
    // Status updates and our own applies leave the fingerprint as last checked: nothing to look at.
    if (type !== 'DELETED' && fingerprint(object) === tracked.seen) return;
    this.schedule(tracked.key);
  }

  /** One watch per resource type with followed objects; a type with none left is no longer watched. */
  private syncWatches(signal: AbortSignal): void {
    const wanted = new Map(this.deps.registry.resources().map((r) => [resourceId(r), r]));
    for (const [id, controller] of this.watches) {
      if (wanted.has(id)) continue;
      controller.abort();
      this.watches.delete(id);
    }
    for (const [id, resource] of wanted) {
      if (this.watches.has(id)) continue;
      const controller = new AbortController();
      signal.addEventListener('abort', () => controller.abort(), { once: true });
      this.watches.set(id, controller);
      void watchResource(this.deps.kube, resource, {
        labelSelector: this.selector(),
        namespace: this.deps.watchNamespace,
        logger: this.deps.logger,
        signal: controller.signal,
        onEvent: (type, object) => this.onEvent(resource, type, object),
      });
    }
    this.deps.metrics.driftWatches.set(this.watches.size);
  }

  private selector(): string {
    return `${OWNER_LABEL}=${this.deps.agentId},${STACK_LABEL}`;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    this.syncWatches(signal);
    const sweeps = this.sweepLoop(signal);
    while (!signal.aborted) {
      if (!this.due.size) await this.wake.wait(30_000, signal);
      if (signal.aborted) break;
      if (!this.deps.isActive()) continue;
      const keys = [...this.due];
      this.due.clear();
      const results = await mapLimit(keys, this.deps.concurrency, (key) => this.deps.detector.check(key));
      results.forEach((r, i) => {
        if (r.status === 'fulfilled' && r.value === 'deferred') this.schedule(keys[i]!, DEFERRED_RETRY_MS);
      });
    }
    for (const timer of this.timers.values()) clearTimeout(timer);
    await sweeps;
  }

  private async sweepLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(this.deps.sweepIntervalMs * (0.9 + Math.random() * 0.2), signal);
      if (signal.aborted) return;
      if (this.deps.isActive()) await this.sweep().catch((err: unknown) => this.deps.logger.warn({ err }, 'drift sweep failed'));
    }
  }

  /**
   * Every followed object checked (one listing per type), then a marker telling the hub which
   * stacks were covered whole since `startedAt`: their open records not reported again are
   * resolved. A stack with an object that could not be checked is left out of the marker.
   */
  async sweep(): Promise<void> {
    const startedAt = new Date().toISOString();
    const partial = new Set<string>();
    const stacks = this.deps.registry.stackIds();
    for (const resource of this.deps.registry.resources()) {
      const tracked = this.deps.registry.all().filter((t) => resourceId(t.resource) === resourceId(resource));
      const listed = await this.list(resource);
      if (!listed) {
        for (const t of tracked) partial.add(t.stackId);
        continue;
      }
      const results = await mapLimit(tracked, this.deps.concurrency, (t) =>
        this.deps.detector.check(t.key, { live: listed.get(t.key) ?? null, sweep: true }),
      );
      results.forEach((r, i) => {
        if (r.status === 'rejected' || incomplete(r.value)) partial.add(tracked[i]!.stackId);
      });
    }
    const covered = stacks.filter((s) => !partial.has(s) && this.deps.registry.ofStack(s).length > 0);
    this.deps.reporter.sweep(covered, startedAt);
    this.deps.metrics.driftSweeps.inc();
  }

  /** The type's followed objects by key, full (they are compared); undefined when the listing failed. */
  private async list(resource: ApiResource): Promise<Map<string, LiveResource> | undefined> {
    try {
      const namespace = resource.namespaced ? this.deps.watchNamespace : undefined;
      const items = await this.deps.objects.list<LiveResource>(resource, namespace, this.selector());
      return new Map(items.map((o) => [keyOfLive(resource, o), o]));
    } catch (err) {
      this.deps.logger.debug({ err, resource: resource.plural }, 'drift sweep could not list a type');
      return undefined;
    }
  }
}

const incomplete = (result: CheckResult) => result === 'deferred';

export type { TrackedObject };
