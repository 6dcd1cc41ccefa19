import type { Queryable } from '@brokkr/db';
import { AGENT_EVENT_COLUMNS, type AgentEventRow } from '../../../domain/agent-event-row.ts';

const RECENT_EVENTS = 20;

/** The agent's newest live events about existing deployment objects (Brokkr inner-joins them). */
export async function recentAgentEvents(db: Queryable, agentId: string): Promise<AgentEventRow[]> {
  const columns = AGENT_EVENT_COLUMNS.split(', ')
    .map((c) => `e.${c}`)
    .join(', ');
  const { rows } = await db.query<AgentEventRow>(
    `SELECT ${columns} FROM agent_events e JOIN deployment_objects d ON d.id = e.deployment_object_id
      WHERE e.agent_id = $1 AND e.deleted_at IS NULL
      ORDER BY e.created_at DESC, e.id LIMIT ${RECENT_EVENTS}`,
    [agentId],
  );
  return rows;
}
