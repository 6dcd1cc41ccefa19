import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import { publishCore } from './publish.ts';
import { SUBJECTS } from './subjects.ts';

/**
 * Set by an api replica on its own wake-ups, which it has already delivered to itself: its
 * subscription skips them (events/notify.ts). Other replicas and maintenance act on every notice.
 */
export const NOTICE_ORIGIN_HEADER = 'Brokkr-Origin';

/** Why the agents are woken, when the sender knows (the WebSocket channel picks its hint frame from it). */
export type NoticeReason = Omit<AgentNotice, 'agent_id'>;

/**
 * Wakes the agents' long-polls and WebSocket channels: one `brokkr.notify.agent.<id>` notice per
 * agent, on core NATS. Lossy by design: a lost one only costs the agent the wait until its next
 * poll, so a failed send is logged and the others still go out. The api and maintenance both send
 * wake-ups through this; when and to whom is theirs to decide.
 */
export function sendAgentNotices(
  nc: NatsConnection,
  agentIds: Iterable<string>,
  logger: Logger,
  why: { reason?: NoticeReason | undefined; origin?: string } = {},
): void {
  const { reason, origin } = why;
  const extra = origin === undefined ? undefined : { [NOTICE_ORIGIN_HEADER]: origin };
  for (const agentId of agentIds) {
    try {
      publishCore(nc, SUBJECTS.notifyAgent(agentId), { ...reason, agent_id: agentId } satisfies AgentNotice, extra);
    } catch (err) {
      logger.debug({ err, agentId }, 'agent wake-up not sent');
    }
  }
}
