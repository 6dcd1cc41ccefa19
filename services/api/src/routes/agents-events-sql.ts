import type { Queryable } from '@brokkr/db';

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

const COLUMNS = 'id, created_at, updated_at, deleted_at, agent_id, deployment_object_id, event_type, status, message';

export async function listAgentEvents(db: Queryable, agentId: string): Promise<AgentEventRow[]> {
  const { rows } = await db.query<AgentEventRow>(
    `SELECT ${COLUMNS} FROM agent_events WHERE agent_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id`,
    [agentId],
  );
  return rows;
}

export async function listAllAgentEvents(db: Queryable): Promise<AgentEventRow[]> {
  const { rows } = await db.query<AgentEventRow>(`SELECT ${COLUMNS} FROM agent_events WHERE deleted_at IS NULL ORDER BY created_at DESC, id`);
  return rows;
}

export async function findAgentEvent(db: Queryable, id: string): Promise<AgentEventRow | undefined> {
  const { rows } = await db.query<AgentEventRow>(`SELECT ${COLUMNS} FROM agent_events WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

export interface NewAgentEvent {
  agentId: string;
  deploymentObjectId: string;
  eventType: string;
  status: string;
  message: string | null;
}

/**
 * Inserts the event and reads the object's stack in the same statement (the webhook data carries
 * `stack_id`, null when the object is soft-deleted). An unknown object or agent is a foreign-key
 * violation (422); an overlong event_type/status a data error (400).
 */
export async function insertAgentEvent(tx: Queryable, e: NewAgentEvent): Promise<AgentEventRow & { stack_id: string | null }> {
  const { rows } = await tx.query<AgentEventRow & { stack_id: string | null }>(
    `WITH ins AS (
       INSERT INTO agent_events (agent_id, deployment_object_id, event_type, status, message)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}
     )
     SELECT ins.*, CASE WHEN d.deleted_at IS NULL THEN d.stack_id END AS stack_id
       FROM ins JOIN deployment_objects d ON d.id = ins.deployment_object_id`,
    [e.agentId, e.deploymentObjectId, e.eventType, e.status, e.message],
  );
  return rows[0]!;
}
