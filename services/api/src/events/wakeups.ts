import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { NOTICE_ORIGIN_HEADER, SUBJECTS } from '@brokkr/bus';
import { agentNoticeSchema, type AgentNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';

export type WaitOutcome = 'woken' | 'timeout' | 'aborted';

/**
 * When a long-poll holding `waitSeconds` ends (epoch ms). `wait` is "up to": each request is held
 * 80–100 % of it. Agents that connected together (after a restart of the api) would otherwise all
 * come back at the same deadline, every `wait` seconds: with 10,000 of them, a wave of 10,000
 * requests (bench:agents).
 */
export function longPollDeadline(waitSeconds: number, now: number = Date.now()): number {
  return now + waitSeconds * 1000 * (0.8 + 0.2 * Math.random());
}

type NoticeListener = (agentId: string, notice: () => AgentNotice) => void;

/** This process's own wake-ups handed to hint senders and long-polls per event-loop turn (deliverLocally). */
const LOCAL_SLICE = 256;

/** One long-poll request's interest in an agent's wake-ups. */
export interface AgentWatch {
  /**
   * Resolves 'woken' as soon as a wake-up arrived since the previous call (so one arriving while
   * the caller was recomputing is not lost), else at the first of a wake-up, `deadline`
   * (epoch ms) or `signal` aborting.
   */
  next(deadline: number, signal: AbortSignal): Promise<WaitOutcome>;
  close(): void;
}

class Watch implements AgentWatch {
  private pending = false;
  private release: (() => void) | undefined;

  constructor(private readonly detach: (w: Watch) => void) {}

  wake(): void {
    this.pending = true;
    this.release?.();
  }

  next(deadline: number, signal: AbortSignal): Promise<WaitOutcome> {
    if (signal.aborted) return Promise.resolve('aborted');
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('woken');
    }
    return new Promise<WaitOutcome>((resolve) => {
      const finish = (outcome: WaitOutcome): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.release = undefined;
        if (outcome === 'woken') this.pending = false;
        resolve(outcome);
      };
      const onAbort = (): void => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()));
      signal.addEventListener('abort', onAbort, { once: true });
      this.release = () => finish('woken');
    });
  }

  close(): void {
    this.release = undefined;
    this.detach(this);
  }
}

function parseNotice(agentId: string, payload: () => unknown): AgentNotice {
  try {
    const parsed = agentNoticeSchema.safeParse(payload());
    if (parsed.success && parsed.data.agent_id.toLowerCase() === agentId) return parsed.data;
  } catch {
    // A malformed payload is still a wake-up for the agent of the subject.
  }
  return { agent_id: agentId };
}

/**
 * Routes `brokkr.notify.agent.<id>` hints to the long-poll requests waiting on this process.
 * One wildcard subscription per api process, dispatched in memory, instead of one NATS
 * subscription per waiting request: thousands of idle agents cost one Set entry each.
 * Hints are lossy (core NATS); a lost one only delays an answer until the request's deadline,
 * where the state is recomputed anyway.
 */
export class AgentWakeups {
  /** Marks this process's own wake-ups, which it delivers to itself when it sends them (notify.ts). */
  readonly origin = randomUUID();
  private readonly waiting = new Map<string, Set<Watch>>();
  private readonly noticeListeners = new Set<NoticeListener>();
  /** Listeners whose work may come after the write that woke them is acknowledged (see deliverLocally). */
  private readonly laggingListeners = new Set<NoticeListener>();
  private readonly lagging: { agentId: string; notice: AgentNotice }[] = [];
  private subscription: { unsubscribe(): void } | undefined;

  /**
   * Every wake-up this process receives, for the other parts of the process that follow agents
   * (the target-state cache, the WebSocket agent channel's hint frames, the fleet and live feeds):
   * one subscription per process, so NATS delivers each hint once, not once per interested part.
   * `notice()` parses the payload on first use: most listeners only need the agent id. `mayLag`:
   * for this process's own wake-ups the listener may run after the write is acknowledged (it
   * sends hints; it does not decide what a request is answered).
   */
  onNotice(listener: NoticeListener, options: { mayLag?: boolean } = {}): () => void {
    this.noticeListeners.add(listener);
    if (options.mayLag) this.laggingListeners.add(listener);
    return () => {
      this.noticeListeners.delete(listener);
      this.laggingListeners.delete(listener);
    };
  }

  private dispatchNotice(agentId: string, notice: () => AgentNotice, only?: (listener: NoticeListener) => boolean): void {
    for (const listener of this.noticeListeners) if (!only || only(listener)) listener(agentId, notice);
  }

  /**
   * Wake-ups this process sends, handled here as if they had come back from NATS (their copies are
   * skipped). What decides answers (the target-state cache) hears them at once, in the write; the
   * rest (woken long-polls, hint frames, feeds) in slices of LOCAL_SLICE agents, one per
   * event-loop turn, so the write's own answer does not wait behind the work of its whole fleet.
   */
  deliverLocally(agentIds: readonly string[], reason: Omit<AgentNotice, 'agent_id'> | undefined): void {
    for (const id of agentIds) {
      const agentId = id.toLowerCase();
      const notice = { ...reason, agent_id: agentId };
      this.dispatchNotice(
        agentId,
        () => notice,
        (listener) => !this.laggingListeners.has(listener),
      );
      this.lagging.push({ agentId, notice });
    }
    if (this.lagging.length === agentIds.length) setImmediate(this.deliverLagging);
  }

  private readonly deliverLagging = (): void => {
    for (const { agentId, notice } of this.lagging.splice(0, LOCAL_SLICE)) {
      this.wake(agentId);
      this.dispatchNotice(
        agentId,
        () => notice,
        (listener) => this.laggingListeners.has(listener),
      );
    }
    if (this.lagging.length > 0) setImmediate(this.deliverLagging);
  };

  /** Starts listening; idempotent. */
  listen(nc: NatsConnection, logger: Logger): void {
    if (this.subscription) return;
    const prefix = SUBJECTS.notifyAgentAll.slice(0, -1);
    const sub = nc.subscribe(SUBJECTS.notifyAgentAll, {
      callback: (err, msg) => {
        if (err) {
          logger.warn({ err }, 'agent wake-up subscription error');
          return;
        }
        // Ours: already delivered when it was sent.
        if (msg.headers?.get(NOTICE_ORIGIN_HEADER) === this.origin) return;
        const agentId = msg.subject.slice(prefix.length).toLowerCase();
        this.wake(agentId);
        let parsed: AgentNotice | undefined;
        this.dispatchNotice(agentId, () => (parsed ??= parseNotice(agentId, () => msg.json())));
      },
    });
    this.subscription = sub;
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /** Wakes the requests of this process waiting on the agent (NATS delivers our own publishes too). */
  wake(agentId: string): void {
    for (const watch of this.waiting.get(agentId.toLowerCase()) ?? []) watch.wake();
  }

  /** Register BEFORE reading the state, so a change committed in between still wakes the request. */
  watch(agentId: string): AgentWatch {
    // Keyed like the subjects, by the lower-case UUID (a path may spell it in upper case).
    const key = agentId.toLowerCase();
    const watch = new Watch((w) => {
      const set = this.waiting.get(key);
      set?.delete(w);
      if (set?.size === 0) this.waiting.delete(key);
    });
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    set.add(watch);
    return watch;
  }

  /** Requests currently waiting (for metrics and tests). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }
}
