import type { Queryable } from '@brokkr/db';
import { AGENT_EVENT_COLUMNS, type AgentEventRow } from '../../../domain/agent-event-row.ts';
import type { ListWindow } from '../../../domain/list-window.ts';

/** The read-only statements of agent events. */

export async function listAgentEvents(db: Queryable, agentId: string, window: ListWindow): Promise<AgentEventRow[]> {
  const { rows } = await db.query<AgentEventRow>(
    `SELECT ${AGENT_EVENT_COLUMNS} FROM agent_events WHERE agent_id = $1 AND deleted_at IS NULL
      ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
    [agentId, window.limit, window.offset],
  );
  return rows;
}

export async function listAllAgentEvents(db: Queryable, window: ListWindow): Promise<AgentEventRow[]> {
  const { rows } = await db.query<AgentEventRow>(
    `SELECT ${AGENT_EVENT_COLUMNS} FROM agent_events WHERE deleted_at IS NULL ORDER BY created_at DESC, id LIMIT $1 OFFSET $2`,
    [window.limit, window.offset],
  );
  return rows;
}

export async function findAgentEvent(db: Queryable, id: string): Promise<AgentEventRow | undefined> {
  const { rows } = await db.query<AgentEventRow>(`SELECT ${AGENT_EVENT_COLUMNS} FROM agent_events WHERE id = $1 AND deleted_at IS NULL`, [
    id,
  ]);
  return rows[0];
}
