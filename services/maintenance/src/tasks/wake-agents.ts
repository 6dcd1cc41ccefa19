import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { AgentNotice } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';

/**
 * Wakes the agents' long-polls and WebSocket channels (`brokkr.notify.agent.<id>`) after a
 * commit that changed what they are served or must claim. Hints are core NATS, lossy by design:
 * a lost one only costs the agent the wait until its next poll.
 */
export function wakeAgents(nc: NatsConnection, agentIds: Iterable<string>, logger: Logger): void {
  for (const agentId of agentIds) {
    try {
      publishCore(nc, SUBJECTS.notifyAgent(agentId), { agent_id: agentId } satisfies AgentNotice);
    } catch (err) {
      logger.debug({ err, agentId }, 'agent wake-up not sent');
    }
  }
}
