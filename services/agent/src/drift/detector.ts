import { randomUUID } from 'node:crypto';
import type { DriftReport, EffectiveDriftPolicy } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { KubeObjects, LiveResource } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import { errorMessage } from '../util/async.ts';
import { driftOf } from './compare.ts';
import { correctionOf } from './correction.ts';
import type { StackGate } from './gate.ts';
import { deletionIgnored, judge } from './policy.ts';
import { fingerprint, type DriftRegistry, type Episode, type TrackedObject } from './registry.ts';
import type { DriftReporter } from './reporter.ts';

export interface DetectorDeps {
  objects: KubeObjects;
  registry: DriftRegistry;
  gate: StackGate;
  reporter: DriftReporter;
  metrics: AgentMetrics;
  logger: Logger;
  /** The stack's drift policy for this agent (its grants). */
  policyFor(stackId: string): EffectiveDriftPolicy;
}

export interface CheckOptions {
  /** The live object as a sweep's listing just read it (no GET needed); null: the listing did not hold it (read to be sure). */
  live?: LiveResource | null;
  /** Part of a sweep: an open drift is reported again (its record's last_seen moves on). */
  sweep?: boolean;
}

export type CheckResult = 'clean' | 'drifted' | 'missing' | 'unchanged' | 'deferred' | 'gone';

/**
 * Checks one applied object against what the agent applied: a server-side dry run of the stamped
 * manifest under the agent's field manager, compared with the live object, through the stack's
 * policy. Drift is reported (the episode opens), then corrected by a forced apply in `correct`
 * mode (the episode closes as corrected) or left alone in `report` mode (it stays open). Drift that
 * goes away by itself closes as resolved.
 */
export class DriftDetector {
  constructor(private readonly deps: DetectorDeps) {}

  async check(key: string, options: CheckOptions = {}): Promise<CheckResult> {
    const tracked = this.deps.registry.get(key);
    if (!tracked) return 'gone';
    try {
      const result = (await this.deps.gate.check(tracked.stackId, () => this.checkTracked(tracked, options))) ?? 'deferred';
      if (result !== 'deferred') this.deps.metrics.driftChecks.inc({ result });
      return result;
    } catch (err) {
      this.deps.metrics.driftChecks.inc({ result: 'error' });
      this.deps.logger.debug({ err: errorMessage(err), object: key }, 'drift check failed; the next event or sweep checks again');
      return 'deferred';
    } finally {
      this.deps.metrics.driftOpen.set(this.deps.registry.openEpisodes());
    }
  }

  private async checkTracked(t: TrackedObject, options: CheckOptions): Promise<CheckResult> {
    const first = options.live ?? (await this.read(t));
    if (!first) return this.missing(t, options);
    if (first.metadata.deletionTimestamp) return 'unchanged';
    if (fingerprint(first) === t.seen) {
      if (t.episode && options.sweep) this.send(t, t.episode, 'open');
      return 'unchanged';
    }
    const pair = await this.dryRunAgainst(t, first);
    if (!pair) return this.missing(t, options);
    const { live, dryRun } = pair;
    const seen = fingerprint(live);
    const policy = this.deps.policyFor(t.stackId);
    const judged = judge(driftOf(live, dryRun, policy.comparison), t.ref, policy);
    if (!judged.fields.length) {
      t.seen = seen;
      this.close(t, 'resolved');
      return 'clean';
    }
    const episode = this.open(t, { missing: false, fields: judged.fields });
    if (policy.mode === 'correct') await this.correct(t, episode, correctionOf(t.manifest, judged.ignored));
    else {
      t.seen = seen;
      this.send(t, episode, 'open');
    }
    return 'drifted';
  }

  private read(t: TrackedObject): Promise<LiveResource | undefined> {
    return this.deps.objects.get(t.resource, t.ref.namespace, t.ref.name);
  }

  /**
   * The dry run and the live object it was made from: a dry run does not move resourceVersion,
   * so a dry run of another version than the live object read means someone wrote in between;
   * the object is read again (a few times at most). Undefined when it is gone meanwhile.
   */
  private async dryRunAgainst(t: TrackedObject, first: LiveResource): Promise<{ live: LiveResource; dryRun: LiveResource } | undefined> {
    let live: LiveResource | undefined = first;
    for (let attempt = 0; ; attempt++) {
      const dryRun = await this.deps.objects.apply(t.resource, t.manifest, true);
      if (dryRun.metadata.resourceVersion === live.metadata.resourceVersion || attempt >= 2) return { live, dryRun };
      live = await this.read(t);
      if (!live) return undefined;
    }
  }

  /** A deleted object is drift too, unless a rule ignores the whole object. */
  private async missing(t: TrackedObject, options: CheckOptions): Promise<CheckResult> {
    const policy = this.deps.policyFor(t.stackId);
    if (deletionIgnored(policy.ignore, t.ref)) {
      this.close(t, 'resolved');
      return 'clean';
    }
    const known = t.episode?.missing === true;
    const episode = this.open(t, { missing: true, fields: [] });
    if (policy.mode === 'correct') await this.correct(t, episode, t.manifest);
    else if (!known || options.sweep) this.send(t, episode, 'open');
    delete t.seen;
    return 'missing';
  }

  /** Starts an episode, or carries on the one open (its fields as found now). */
  private open(t: TrackedObject, found: Omit<Episode, 'id'>): Episode {
    if (!t.episode) this.deps.metrics.driftDetected.inc({ kind: t.ref.kind });
    t.episode = { id: t.episode?.id ?? randomUUID(), ...found };
    return t.episode;
  }

  /**
   * Puts the object back with the agent's own field manager and force, so the correction wins
   * over whoever changed it (a field another manager took over is only given back by force). A
   * correction that fails leaves the episode open; the next event or sweep tries again.
   */
  private async correct(t: TrackedObject, episode: Episode, object: TrackedObject['manifest']): Promise<void> {
    try {
      const live = await this.deps.objects.apply(t.resource, object);
      t.seen = fingerprint(live);
      this.deps.metrics.driftCorrections.inc({ kind: t.ref.kind });
      this.deps.logger.info({ object: t.key, stack: t.stackId, paths: episode.fields.map((f) => f.path) }, 'drift corrected');
      this.close(t, 'corrected');
    } catch (err) {
      delete t.seen;
      this.deps.logger.warn({ err: errorMessage(err), object: t.key }, 'drift not corrected; reported open');
      this.send(t, episode, 'open');
    }
  }

  /**
   * The hub closed these episodes' records (an operator accepted the drift): they end here too,
   * without a report; returns the objects, to be checked again once the acceptance's ignore rule
   * has had time to arrive. Drift beyond what was accepted then opens a new episode.
   */
  endEpisodes(ids: readonly string[]): string[] {
    const closed = new Set(ids);
    const keys: string[] = [];
    for (const t of this.deps.registry.all()) {
      if (!t.episode || !closed.has(t.episode.id)) continue;
      delete t.episode;
      delete t.seen;
      keys.push(t.key);
    }
    this.deps.metrics.driftOpen.set(this.deps.registry.openEpisodes());
    return keys;
  }

  /** Ends the object's episode, if one is open: the hub closes its record. */
  close(t: TrackedObject, state: 'corrected' | 'resolved'): void {
    if (!t.episode) return;
    this.send(t, t.episode, state);
    delete t.episode;
  }

  private send(t: TrackedObject, episode: Episode, state: DriftReport['state']): void {
    this.deps.reporter.report({
      id: episode.id,
      stack_id: t.stackId,
      deployment_object_id: t.objectId,
      object: { api_version: t.manifest.apiVersion, kind: t.ref.kind, namespace: t.ref.namespace ?? null, name: t.ref.name },
      state,
      missing: episode.missing,
      fields: episode.fields,
      observed_at: new Date().toISOString(),
    });
  }
}
