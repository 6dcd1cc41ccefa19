import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '@brokkr/logger';
import { sleep } from '../util/async.ts';
import type { ClusterEventsChannel } from './channel.ts';
import type { StackAdmission } from './admission.ts';
import { touch, type CursorStore } from './cursor-store.ts';
import type { LogSource } from './log-source.ts';
import { ContainerRateLimit } from './rate-limit.ts';
import { stackOf, streamsLogs } from './stack-of.ts';
import { sortableTs, splitTimestamp } from './timestamps.ts';
import { runWatch, type WatchPhase } from './watch-loop.ts';

/** A stream that ended while its container still runs (an apiserver timeout) is reopened after this. */
const REOPEN_MS = 1000;

interface Pod {
  metadata?: { name?: string; namespace?: string; uid?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { containers?: { name: string }[] };
  status?: { containerStatuses?: { name: string; containerID?: string; state?: { running?: { startedAt?: string } } }[] };
}

interface Tail {
  key: string;
  podUid: string;
  namespace: string;
  pod: string;
  container: string;
  stackId: string;
  startedAt: string | undefined;
  controller: AbortController;
}

/** The tails a pod wants: its `spec.containers` (not init or ephemeral ones) running right now. */
function runningContainers(pod: Pod, stackId: string): Tail[] {
  const { namespace, name, uid } = pod.metadata ?? {};
  if (!namespace || !name || !uid) return [];
  const wanted = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return (pod.status?.containerStatuses ?? [])
    .filter((s) => wanted.has(s.name) && s.containerID && s.state?.running)
    .map((s) => ({
      key: `${namespace}/${name}/${s.name}/${s.containerID}`,
      podUid: uid,
      namespace,
      pod: name,
      container: s.name,
      stackId,
      startedAt: s.state?.running?.startedAt,
      controller: new AbortController(),
    }));
}

/** Up to the cursor (inclusive) lines were handled before; without one, lines before the floor are not backfilled. */
function alreadyHandled(ts: string, handled: string | undefined, floor: string | undefined): boolean {
  if (handled !== undefined) return sortableTs(ts) <= sortableTs(handled);
  return floor !== undefined && sortableTs(ts) < sortableTs(floor);
}

export interface PodLogTailerDeps {
  kc: KubeConfig;
  source: LogSource;
  channel: ClusterEventsChannel;
  cursor: CursorStore;
  agentId: string;
  watchNamespace: string | undefined;
  grants: StackAdmission;
  logger: Logger;
}

/**
 * Streams the log lines of pods that opt in (`brokkr.io/stream-logs: "true"` and a stack marker on
 * the Pod itself) as `pod_log_line` frames, one tail per running container instance
 * (`spec.containers`, keyed by containerID so a restarted container is a new tail).
 *
 * Unlike Brokkr it does not replay: each tail starts at the cursor (the kubelet timestamp of the
 * last line handled, via `sinceTime` and then skipping lines up to it), and a container that was
 * already running before the agent ever started is read only from that first start. Lines over
 * 100/s per container are dropped and announced by one `log_gap` with the real count. When the
 * channel does not take a line, the tail stops without moving the cursor and resumes from it
 * once the channel is back, so nothing is lost while the hub is unreachable (within the
 * container's log retention).
 */
export class PodLogTailer {
  private readonly tails = new Map<string, Tail>();
  private readonly limits = new Map<string, ContainerRateLimit>();
  private readonly pods = new Map<string, Pod>();
  private readonly stalled = new Set<string>();
  private signal: AbortSignal | undefined;

  constructor(private readonly deps: PodLogTailerDeps) {}

  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const ns = this.deps.watchNamespace;
    const path = ns ? `/api/v1/namespaces/${encodeURIComponent(ns)}/pods` : '/api/v1/pods';
    const gaps = setInterval(() => this.sendGaps(), 1000);
    try {
      await runWatch(this.deps.kc, path, (phase, obj) => this.onPod(phase, obj as Pod), { logger: this.deps.logger, signal });
    } finally {
      clearInterval(gaps);
      for (const tail of this.tails.values()) tail.controller.abort();
    }
  }

  /** The channel is up again: tails stopped by a refused line resume from their cursor. */
  retryUnsent(): void {
    const pods = new Set([...this.stalled].map((key) => key.split('/').slice(0, 2).join('/')));
    this.stalled.clear();
    for (const pod of this.pods.values()) if (pods.has(`${pod.metadata?.namespace}/${pod.metadata?.name}`)) this.onPod('MODIFIED', pod);
  }

  private onPod(phase: WatchPhase, pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const stackId = stackOf(pod.metadata);
    const verdict = phase === 'DELETED' ? 'refuse' : this.admission(stackId, pod);
    if (verdict === 'refuse') return this.forget(uid);
    this.pods.set(uid, pod);
    // A stack the grants do not name yet: kept, and tailed once they do (recheck).
    if (verdict === 'unknown') return;
    for (const tail of runningContainers(pod, stackId!)) {
      if (this.tails.has(tail.key) || this.stalled.has(tail.key)) continue;
      this.tails.set(tail.key, tail);
      void this.follow(tail);
    }
  }

  /**
   * Only a pod that opts in, names a stack, and runs where its stack's grant lets it run (never in
   * the agent's own namespace).
   */
  private admission(stackId: string | undefined, pod: Pod): 'admit' | 'refuse' | 'unknown' {
    if (!stackId || !streamsLogs(pod.metadata)) return 'refuse';
    const { name, namespace } = pod.metadata ?? {};
    return this.deps.grants.judge(stackId, { apiVersion: 'v1', kind: 'Pod', name: name ?? '', namespace, namespaced: true });
  }

  private forget(uid: string): void {
    this.pods.delete(uid);
    for (const tail of this.tails.values()) if (tail.podUid === uid) tail.controller.abort();
  }

  /** The grants were read again: pods held back for an unknown stack are judged again. */
  recheck(): void {
    for (const pod of [...this.pods.values()]) this.onPod('MODIFIED', pod);
  }

  /** Reads one container instance until it stops, the pod opts out, or the channel refuses a line. */
  private async follow(tail: Tail): Promise<void> {
    const signal = AbortSignal.any([tail.controller.signal, ...(this.signal ? [this.signal] : [])]);
    let outcome: 'ended' | 'refused' = 'ended';
    try {
      while (!signal.aborted) {
        outcome = await this.readOnce(tail, signal);
        if (outcome === 'refused' || signal.aborted || !this.stillRunning(tail)) break;
        await sleep(REOPEN_MS, signal);
      }
    } catch (err) {
      if (!signal.aborted) this.deps.logger.debug({ err, container: tail.key }, 'log stream failed; reopened on the next pod update');
    } finally {
      this.tails.delete(tail.key);
      if (outcome === 'refused') this.stalled.add(tail.key);
    }
  }

  /** One log stream from the cursor to its end: 'refused' when the channel did not take a line. */
  private async readOnce(tail: Tail, signal: AbortSignal): Promise<'ended' | 'refused'> {
    const store = this.deps.cursor;
    const handled = store.cursor.logs[tail.key];
    // A container running before the agent's first start is read from that start only (no backfill of old logs).
    const floor = handled ?? (tail.startedAt && tail.startedAt < store.cursor.firstStart ? store.cursor.firstStart : undefined);
    const request = { namespace: tail.namespace, pod: tail.pod, container: tail.container, sinceTime: floor, signal };
    for await (const raw of this.deps.source(request)) {
      const { ts: stamped, line } = splitTimestamp(raw);
      const ts = stamped ?? new Date().toISOString();
      if (alreadyHandled(ts, handled, floor)) continue;
      if (this.limiter(tail.key).admit() && !this.sendLine(tail, ts, line)) return 'refused';
      touch(store.cursor.logs, tail.key, ts);
      store.changed();
    }
    return 'ended';
  }

  private sendLine(tail: Tail, ts: string, line: string): boolean {
    const { agentId } = this.deps;
    const body = {
      agent_id: agentId,
      stack_id: tail.stackId,
      namespace: tail.namespace,
      pod: tail.pod,
      container: tail.container,
      ts,
      line,
    };
    return this.deps.channel.sendTelemetry({ type: 'pod_log_line', body });
  }

  private stillRunning(tail: Tail): boolean {
    const pod = this.pods.get(tail.podUid);
    return (pod?.status?.containerStatuses ?? []).some(
      (s) => `${tail.namespace}/${tail.pod}/${s.name}/${s.containerID}` === tail.key && !!s.state?.running,
    );
  }

  private limiter(key: string): ContainerRateLimit {
    let limit = this.limits.get(key);
    if (!limit) this.limits.set(key, (limit = new ContainerRateLimit()));
    return limit;
  }

  private sendGaps(): void {
    for (const [key, limit] of this.limits) {
      const gap = limit.takeGap();
      const tail = this.tails.get(key);
      if (!gap) {
        if (!tail) this.limits.delete(key);
        continue;
      }
      const [namespace, pod] = key.split('/');
      const stackId =
        tail?.stackId ??
        stackOf([...this.pods.values()].find((p) => p.metadata?.namespace === namespace && p.metadata?.name === pod)?.metadata);
      if (!stackId) continue;
      const body = {
        agent_id: this.deps.agentId,
        stack_id: stackId,
        since_ts: gap.since.toISOString(),
        dropped_count: gap.dropped,
        reason: 'rate_limit' as const,
      };
      this.deps.channel.sendTelemetry({ type: 'log_gap', body });
    }
  }
}
