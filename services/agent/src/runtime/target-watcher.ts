import type { TargetStatePatch } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { BrokerClient, TargetStateAnswer } from '../broker/client.ts';
import type { DeploymentObject } from '../broker/types.ts';
import type { AgentMetrics } from '../metrics.ts';
import { backoffDelay, sleep, Wakeup } from '../util/async.ts';

export interface TargetWatcherDeps {
  broker: BrokerClient;
  metrics: AgentMetrics;
  logger: Logger;
  agentId: string;
  pollingIntervalMs: number;
  /** While the agent channel is up: fetch on hints, and at least this often (±20 %) in case one was lost. */
  channelResyncMs: number;
  longPollWaitSeconds: number;
  /** The agent checks signatures (a trust policy): answers carry each object's signature. */
  signatures?: boolean;
  isActive(): boolean;
  /** False while the agent channel is up: its hints say when to fetch, so no request is held open. */
  longPollWanted?: () => boolean;
  /** A successful listing with new content. */
  onState(objects: DeploymentObject[]): void;
  /** Brought up to each new answer's grants digest before the answer is handed on (grants/book.ts). */
  grants?: { sync(digest: string | undefined): Promise<void> };
}

/** A long-poll that comes back sooner than this was not held: the broker does not offer it. */
const HELD_MS = 1000;

/**
 * `ms` ±20 %: agents that connected together (after an api restart) spread their resyncs out
 * instead of returning in step.
 */
export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (0.8 + 0.4 * random()));
}

/**
 * Keeps the desired state current. While the agent channel is up, its hints say when to fetch and
 * a slow jittered resync covers a lost one (a fleet of connected agents stays quiet). Otherwise,
 * with a broker that answers with an ETag, each request sends If-None-Match and `wait`, and the
 * broker holds it until the state changes (304 on timeout); else (Brokkr's broker) it polls every
 * polling interval.
 */
export class TargetWatcher {
  private etag: string | undefined;
  /** The objects of the last 200, patched since: what a `target_state_patch` frame applies to. */
  private objects: DeploymentObject[] | undefined;
  private fetching = false;
  /** The hub's `Brokkr-Poll-Interval`, in ms, once it said one: it replaces the polling interval. */
  private hubPollMs: number | undefined;
  private readonly activeWake = new Wakeup();
  private readonly hintWake = new Wakeup();
  /** Aborts the long-poll in flight (the agent channel came up: hints take over). */
  private holding: AbortController | undefined;
  private holdStopped = false;

  constructor(private readonly deps: TargetWatcherDeps) {}

  /** Ends a held long-poll at once (its answer is not needed: the agent channel's hints take over). */
  stopHolding(): void {
    if (!this.holding) return;
    this.holdStopped = true;
    this.holding.abort();
  }

  /** A hint from the agent channel (`stack_changed`, `target_changed`): fetch now. */
  hinted(): void {
    this.hintWake.notify();
  }

  /**
   * A `target_state_patch` frame: the hub moved our state from `base_etag` to `etag` and sent the
   * new objects. Applied only on top of exactly that base and with no fetch in flight (whose
   * answer could be older); anything else is a plain hint: fetch.
   */
  patched(patch: TargetStatePatch): void {
    const objects = this.objects && !this.fetching && this.etag === patch.base_etag ? applyPatch(this.objects, patch) : undefined;
    if (!objects) return this.hinted();
    this.etag = patch.etag;
    this.objects = objects;
    this.deps.metrics.pollRequests.inc({ status: 'patched' });
    this.deps.onState(objects);
  }

  /** The agent's status changed: forget the ETag (an inactive agent was served an empty state). */
  statusChanged(): void {
    this.etag = undefined;
    this.objects = undefined;
    this.activeWake.notify();
  }

  private async fetchOnce(signal: AbortSignal): Promise<number> {
    const started = Date.now();
    const sentEtag = this.etag;
    const end = this.deps.metrics.pollDuration.startTimer();
    const channelUp = this.deps.longPollWanted?.() === false;
    const waitSeconds = channelUp ? 0 : this.deps.longPollWaitSeconds;
    const holding = waitSeconds > 0 ? new AbortController() : undefined;
    this.holding = holding;
    this.fetching = true;
    const answer = await this.fetchAnswer({ sentEtag, waitSeconds, holding, signal }).finally(() => {
      end();
      this.fetching = false;
      if (this.holding === holding) this.holding = undefined;
    });
    this.deps.metrics.lastSuccessfulPoll.set(Date.now() / 1000);
    this.deps.metrics.pollRequests.inc({ status: answer.changed ? 'success' : 'not_modified' });
    this.etag = answer.etag;
    if (answer.pollSeconds !== undefined) this.hubPollMs = answer.pollSeconds * 1000;
    if (answer.changed) {
      this.objects = answer.objects;
      this.deps.onState(answer.objects);
    }
    if (channelUp) return jittered(this.deps.channelResyncMs);
    return this.pauseAfterPoll({ waitSeconds, sentEtag, answer, tookMs: Date.now() - started });
  }

  /** The answer, with the grant book brought up to it: nothing of a new state is used under older grants. */
  private async fetchAnswer(req: {
    sentEtag: string | undefined;
    waitSeconds: number;
    holding: AbortController | undefined;
    signal: AbortSignal;
  }): Promise<TargetStateAnswer> {
    const answer = await this.deps.broker.targetState({
      agentId: this.deps.agentId,
      etag: req.sentEtag,
      waitSeconds: req.waitSeconds,
      signatures: this.deps.signatures ?? false,
      signal: req.holding ? AbortSignal.any([req.signal, req.holding.signal]) : req.signal,
    });
    if (answer.changed) await this.deps.grants?.sync(answer.grants);
    return answer;
  }

  /** Without the channel: at once after a held long-poll, else the polling interval. */
  private pauseAfterPoll(poll: { waitSeconds: number; sentEtag: string | undefined; answer: TargetStateAnswer; tookMs: number }): number {
    const longPoll = poll.waitSeconds > 0 && poll.answer.etag !== undefined;
    // The first request (no ETag yet) is answered at once by design; later ones should be held.
    const held = longPoll && (!poll.sentEtag || poll.answer.changed || poll.tookMs >= HELD_MS);
    return held ? 0 : this.pollingPause();
  }

  /** The hub's interval when it said one, else ours; jittered, so a fleet that started together does not poll in step. */
  private pollingPause(): number {
    return this.hubPollMs === undefined ? this.deps.pollingIntervalMs : jittered(this.hubPollMs);
  }

  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      if (!this.deps.isActive()) {
        await this.activeWake.wait(this.deps.pollingIntervalMs, signal);
        continue;
      }
      try {
        const pause = await this.fetchOnce(signal);
        failures = 0;
        // A hint cuts the pause short (a hint that came during the fetch too: Wakeup remembers it).
        if (pause) await this.hintWake.wait(pause, signal);
      } catch (err) {
        if (signal.aborted) break;
        // stopHolding(): not a failure, fetch again (without holding) at once.
        if (this.holdStopped) {
          this.holdStopped = false;
          continue;
        }
        failures++;
        this.deps.metrics.pollRequests.inc({ status: 'error' });
        this.deps.logger.warn({ err }, 'fetching the target state failed');
        await sleep(backoffDelay(failures, this.deps.pollingIntervalMs, 60_000), signal);
      }
    }
  }
}

/**
 * Each patch object in place of its stack's object, newest first as a target-state answer is
 * ordered; undefined when a stack is not in `objects` (the hub's step was made from another base).
 */
export function applyPatch(objects: readonly DeploymentObject[], patch: TargetStatePatch): DeploymentObject[] | undefined {
  let next = [...objects];
  for (const object of patch.objects) {
    const at = next.findIndex((o) => o.stack_id === object.stack_id);
    if (at < 0) return undefined;
    next = next.with(at, object);
  }
  return next.sort((a, b) => b.sequence_id - a.sequence_id);
}
