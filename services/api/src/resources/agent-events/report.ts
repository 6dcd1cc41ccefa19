import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import { writeOnce, type WriteOnceDeps } from '../../events/write-once.ts';
import type { AgentEventRow } from '../../domain/agent-event-row.ts';
import { AGENT_EVENT_DATA_KEYS, recordAgentEvent, type NewAgentEvent } from './sql/record-agent-event.ts';

export type AgentEventReport = Omit<NewAgentEvent, 'agentId'>;

/**
 * Everything an agent's event report entails, whichever way it arrived (REST `POST
 * /agents/{id}/events` or an `agent_event` frame on the WebSocket channel): the row, the
 * `deployment.applied`/`deployment.failed` webhook event (Brokkr's WS path skips it; we do not)
 * and a wake-up of the agent's incremental long-poll. One statement (writeOnce).
 */
export async function reportAgentEvent(ctx: WriteOnceDeps, agentId: string, report: AgentEventReport): Promise<AgentEventRow> {
  const event = statementEvent(report.status.toUpperCase() === 'SUCCESS' ? 'deployment.applied' : 'deployment.failed');
  return writeOnce(ctx, async (w) => {
    const { row, eventData } = await recordAgentEvent(w.db, { ...report, agentId }, event);
    w.inserted(statementOutboxRow(event, eventData, AGENT_EVENT_DATA_KEYS));
    // The incremental target state drops what the agent applied (or acknowledged).
    w.notifyAgents([agentId]);
    return row;
  });
}
