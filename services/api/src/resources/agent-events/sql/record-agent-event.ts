import type { Queryable } from '@brokkr/db';
import { AGENT_EVENT_COLUMNS, type AgentEventRow } from './queries.ts';

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
export async function recordAgentEvent(tx: Queryable, e: NewAgentEvent): Promise<AgentEventRow & { stack_id: string | null }> {
  const { rows } = await tx.query<AgentEventRow & { stack_id: string | null }>(
    `WITH ins AS (
       INSERT INTO agent_events (agent_id, deployment_object_id, event_type, status, message)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${AGENT_EVENT_COLUMNS}
     )
     SELECT ins.*, CASE WHEN d.deleted_at IS NULL THEN d.stack_id END AS stack_id
       FROM ins JOIN deployment_objects d ON d.id = ins.deployment_object_id`,
    [e.agentId, e.deploymentObjectId, e.eventType, e.status, e.message],
  );
  return rows[0]!;
}
