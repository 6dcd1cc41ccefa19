import type { Queryable } from '@brokkr/db';
import type { ListWindow } from '../../../http/list-page.ts';

/** The read-only statements of agent events. */

export interface AgentEventRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  agent_id: string;
  deployment_object_id: string;
  event_type: string;
  status: string;
  message: string | null;
}

export const AGENT_EVENT_COLUMNS = 'id, created_at, updated_at, deleted_at, agent_id, deployment_object_id, event_type, status, message';

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
