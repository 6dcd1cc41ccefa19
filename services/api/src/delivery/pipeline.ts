import type { NatsConnection } from '@nats-io/transport-node';
import { NOTICE_ORIGIN_HEADER, SUBJECTS, type NoticeReason } from '@brokkr/bus';
import { agentNoticeSchema, type AgentNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';

/** A notice, parsed on first use: most stages need only the agent id. */
export type LazyNotice = () => AgentNotice;

/**
 * What a committed change must reach on this replica, as fixed stages in this order. Every notice
 * (`brokkr.notify.agent.<id>`: the agent's target state or pending work may have changed) goes
 * through all four, whoever sent it:
 *
 *   1. answers — the target-state answers this replica keeps (target-state/answer-cache.ts): what
 *      decides what a request is answered, so it hears a notice before anything can ask;
 *   2. waiters — requests held waiting for the agent (waiters.ts): woken, they read stage 1;
 *   3. sockets — the agent's WebSocket on this replica (agent-sockets/): a hint, or a patch frame
 *      made from stage 1's step;
 *   4. views — what watches agents for people (the fleet feed, the cluster-event access cache).
 */
export interface DeliveryStages {
  answers: { noticed(agentId: string, notice: LazyNotice): void };
  waiters: { wake(agentId: string): void };
  sockets: { noticed(agentId: string, notice: LazyNotice): void };
  views: readonly { noticed(agentId: string): void }[];
}

/** This replica's own notices reach stages 2–4 for this many agents per event-loop turn. */
const LOCAL_SLICE = 256;

function parseNotice(agentId: string, payload: () => unknown): AgentNotice {
  try {
    const parsed = agentNoticeSchema.safeParse(payload());
    if (parsed.success && parsed.data.agent_id.toLowerCase() === agentId) return parsed.data;
  } catch {
    // A malformed payload is still a notice for the agent of the subject.
  }
  return { agent_id: agentId };
}

/**
 * The delivery of notices to this replica's stages. A notice this replica sends (a write here) is
 * delivered at once, in the write, to stage 1 — so the write is answered only when this replica
 * can no longer serve from before it — and then to stages 2–4 in slices of LOCAL_SLICE agents per
 * event-loop turn, so the write's own answer does not wait behind the work of its whole fleet. Its
 * copies coming back from NATS carry this replica's origin and are skipped. A notice from another
 * replica goes through the four stages at once. One wildcard subscription per process: NATS
 * delivers each notice once, not once per interested part.
 */
export class Delivery {
  private readonly later: { agentId: string; notice: AgentNotice }[] = [];
  private subscription: { unsubscribe(): void } | undefined;

  /** `origin` marks this replica's own notices (NOTICE_ORIGIN_HEADER) and its presence (replicas.ts). */
  constructor(
    readonly origin: string,
    private readonly stages: DeliveryStages,
  ) {}

  /** Notices this replica sends (send.ts), handled here as if they had come back from NATS. */
  local(agentIds: readonly string[], reason: NoticeReason | undefined): void {
    for (const agentId of agentIds) {
      const notice = { ...reason, agent_id: agentId };
      this.stages.answers.noticed(agentId, () => notice);
      this.later.push({ agentId, notice });
    }
    if (this.later.length === agentIds.length && agentIds.length > 0) setImmediate(this.deliverLater);
  }

  private readonly deliverLater = (): void => {
    for (const { agentId, notice } of this.later.splice(0, LOCAL_SLICE)) this.afterAnswers(agentId, () => notice);
    if (this.later.length > 0) setImmediate(this.deliverLater);
  };

  /** A notice from another replica: every stage, in order. */
  remote(agentId: string, notice: LazyNotice): void {
    this.stages.answers.noticed(agentId, notice);
    this.afterAnswers(agentId, notice);
  }

  private afterAnswers(agentId: string, notice: LazyNotice): void {
    this.stages.waiters.wake(agentId);
    this.stages.sockets.noticed(agentId, notice);
    for (const view of this.stages.views) view.noticed(agentId);
  }

  /** Subscribes to every replica's notices; idempotent. */
  listen(nc: NatsConnection, logger: Logger): void {
    if (this.subscription) return;
    const prefix = SUBJECTS.notifyAgentAll.slice(0, -1);
    this.subscription = nc.subscribe(SUBJECTS.notifyAgentAll, {
      callback: (err, msg) => {
        if (err) return void logger.warn({ err }, 'agent notice subscription error');
        // Ours: already delivered when it was sent.
        if (msg.headers?.get(NOTICE_ORIGIN_HEADER) === this.origin) return;
        const agentId = msg.subject.slice(prefix.length).toLowerCase();
        let parsed: AgentNotice | undefined;
        this.remote(agentId, () => (parsed ??= parseNotice(agentId, () => msg.json())));
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }
}
