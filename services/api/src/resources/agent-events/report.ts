import type { ApiContext } from '../../context.ts';
import type { AgentEventRow } from './sql/queries.ts';
import { recordAgentEvent, type NewAgentEvent } from './sql/record-agent-event.ts';

export type AgentEventReport = Omit<NewAgentEvent, 'agentId'>;

/**
 * Everything an agent's event report entails, whichever way it arrived (REST `POST
 * /agents/{id}/events` or an `agent_event` frame on the WebSocket channel): the row, the
 * `deployment.applied`/`deployment.failed` webhook event (Brokkr's WS path skips it; we do not)
 * and a wake-up of the agent's incremental long-poll.
 */
export async function reportAgentEvent(ctx: Pick<ApiContext, 'transact'>, agentId: string, report: AgentEventReport): Promise<AgentEventRow> {
  return ctx.transact(async (tx) => {
    const { stack_id, ...row } = await recordAgentEvent(tx.client, { ...report, agentId });
    tx.emit(row.status.toUpperCase() === 'SUCCESS' ? 'deployment.applied' : 'deployment.failed', {
      agent_event_id: row.id,
      agent_id: row.agent_id,
      deployment_object_id: row.deployment_object_id,
      stack_id,
      event_type: row.event_type,
      status: row.status,
      message: row.message,
      created_at: row.created_at.toISOString(),
    });
    // The incremental target state drops what the agent applied (or acknowledged).
    tx.notifyAgents([agentId]);
    return row;
  });
}
