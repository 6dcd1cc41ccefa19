import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import { writeOnce, type WriteOnceDeps } from '../../events/write-once.ts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import type { AgentEventRow } from '../../domain/agent-event-row.ts';
import { dependencyWatchers } from '../../domain/stack-dependencies.ts';
import { AGENT_EVENT_DATA_KEYS, recordAgentEvent, type NewAgentEvent } from './sql/record-agent-event.ts';

export type AgentEventReport = Omit<NewAgentEvent, 'agentId'>;

/**
 * An object the agent is not served gets Brokkr's answer for an unknown object (422
 * `foreign_key_violation`), so the reporter learns nothing about objects it is not served.
 */
const notServed = () => foreignKeyViolation({ constraint: 'agent_events_deployment_object_id_fkey' });

/**
 * Everything an agent's event report entails, whichever way it arrived (REST `POST
 * /agents/{id}/events` or an `agent_event` frame on the WebSocket channel): the row, the
 * `deployment.applied`/`deployment.failed` webhook event (Brokkr's WS path skips it; we do not)
 * and a wake-up of the agent's incremental long-poll. One statement (writeOnce), which writes
 * nothing for an object the agent is not, and was not, served (domain/association.ts). An event on
 * a stack others depend on may release or hold back a dependent stack: whom it may concern
 * (dependencyWatchers, read after the statement committed) is woken to have their answers read again.
 */
/** SUCCESS: applied; BLOCKED: held back by a maintenance window (docs/maintenance-windows.md); anything else: failed. */
function eventTypeOf(status: string): 'deployment.applied' | 'deployment.failed' | 'deployment.window_blocked' {
  const upper = status.toUpperCase();
  return upper === 'SUCCESS' ? 'deployment.applied' : upper === 'BLOCKED' ? 'deployment.window_blocked' : 'deployment.failed';
}

export async function reportAgentEvent(ctx: WriteOnceDeps, agentId: string, report: AgentEventReport): Promise<AgentEventRow> {
  const event = statementEvent(eventTypeOf(report.status));
  return writeOnce(ctx, async (w) => {
    const recorded = await recordAgentEvent(w.db, { ...report, agentId }, event);
    if (!recorded) throw notServed();
    const { row, eventData } = recorded;
    w.inserted(statementOutboxRow(event, eventData, AGENT_EVENT_DATA_KEYS));
    // The incremental target state drops what the agent applied (or acknowledged): only what events decide.
    w.notifyAgents([agentId], { ack: true });
    const watchers = recorded.gates ? await dependencyWatchers(ctx.db.pool, agentId, [row.deployment_object_id]) : [];
    if (watchers.length > 0) w.notifyAgents(watchers);
    return row;
  });
}
