import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { AgentNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';

/** Why the agents are woken, when the write knows (the WebSocket channel picks its hint frame from it). */
export type NoticeReason = Omit<AgentNotice, 'agent_id'>;

/** Wakes long-polls waiting for these agents' target state, on every api replica. */
export type NotifyAgents = (agentIds: Iterable<string>, reason?: NoticeReason) => void;

export function createNotifyAgents(nc: NatsConnection, logger: Logger): NotifyAgents {
  return (agentIds, reason) => {
    for (const agentId of new Set(agentIds)) {
      try {
        publishCore(nc, SUBJECTS.notifyAgent(agentId), { ...reason, agent_id: agentId } satisfies AgentNotice);
      } catch (err) {
        // A lost hint only delays the agent until its next poll.
        logger.debug({ err, agentId }, 'agent notification not sent');
      }
    }
  };
}
