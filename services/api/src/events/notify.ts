import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { AgentNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { PublishWindow } from './publish-window.ts';

/** Why the agents are woken, when the write knows (the WebSocket channel picks its hint frame from it). */
export type NoticeReason = Omit<AgentNotice, 'agent_id'>;

/** Wakes long-polls waiting for these agents' target state, on every api replica. */
export type NotifyAgents = (agentIds: Iterable<string>, reason?: NoticeReason) => void;

/** Wake-ups go out when the publish window closes, with the events of the same writes. */
export function createNotifyAgents(nc: NatsConnection, logger: Logger, window: PublishWindow): NotifyAgents {
  return (agentIds, reason) => {
    const ids = [...new Set(agentIds)];
    window.defer(() => {
      for (const agentId of ids) {
        try {
          publishCore(nc, SUBJECTS.notifyAgent(agentId), { ...reason, agent_id: agentId } satisfies AgentNotice);
        } catch (err) {
          // A lost hint only delays the agent until its next poll.
          logger.debug({ err, agentId }, 'agent notification not sent');
        }
      }
    });
  };
}
