import { prepared, type Queryable } from '@brokkr/db';
import { isoTimestampSql, outboxInsertSql, type StatementEvent } from '@brokkr/outbox';
import { AGENT_EVENT_COLUMNS, type AgentEventRow } from '../../../domain/agent-event-row.ts';
import { servedToAgent } from '../../../domain/association.ts';
import { gatesOnObjectSql } from '../../../domain/stack-dependencies.ts';

export interface NewAgentEvent {
  agentId: string;
  deploymentObjectId: string;
  eventType: string;
  status: string;
  message: string | null;
}

/** The `deployment.applied` / `deployment.failed` payload's data, in Brokkr's key order. */
export const AGENT_EVENT_DATA_KEYS = [
  'agent_event_id',
  'agent_id',
  'deployment_object_id',
  'stack_id',
  'event_type',
  'status',
  'message',
  'created_at',
] as const;

// ONE statement (its own transaction, no BEGIN/COMMIT round trips): the event row, only for an
// object the agent is or was served (domain/association.ts), the object's stack (the webhook data
// carries `stack_id`, null when the object is soft-deleted) and the outbox row built from both.
// Any other object inserts nothing, so no event and no outbox row either. `gates`: some stack
// depends on the object's stack (domain/stack-dependencies.ts), so the event may make a dependent
// stack ready or unready: one index probe, false for every stack nobody depends on.
const recordStatement = prepared(
  'brokkr_agent_event_record',
  `WITH ins AS (
     INSERT INTO agent_events (agent_id, deployment_object_id, event_type, status, message)
     SELECT $1::uuid, $2::uuid, $3::text, $4::text, $5::text
      WHERE ${servedToAgent('$2::uuid', '$1::uuid')}
     RETURNING ${AGENT_EVENT_COLUMNS}
   ),
   rec AS (
     SELECT ins.*, CASE WHEN d.deleted_at IS NULL THEN d.stack_id END AS stack_id
       FROM ins JOIN deployment_objects d ON d.id = ins.deployment_object_id
   ),
   event AS (
     ${outboxInsertSql({
       event: '$6::jsonb',
       from: 'rec',
       data: `jsonb_build_object('agent_event_id', rec.id, 'agent_id', rec.agent_id, 'deployment_object_id', rec.deployment_object_id,
                                 'stack_id', rec.stack_id, 'event_type', rec.event_type, 'status', rec.status, 'message', rec.message,
                                 'created_at', ${isoTimestampSql('rec.created_at')})`,
     })}
   )
   SELECT rec.*, event.event_data, ${gatesOnObjectSql('rec.deployment_object_id')} AS gates FROM rec, event`,
);

/**
 * Inserts the event with its outbox row (`event` says which); undefined, and nothing written, when
 * the object is unknown or not one the agent is or was served. An overlong event_type/status is a
 * data error (400).
 */
export async function recordAgentEvent(
  db: Queryable,
  e: NewAgentEvent,
  event: StatementEvent,
): Promise<{ row: AgentEventRow; stackId: string | null; eventData: Record<string, unknown>; gates: boolean } | undefined> {
  const { rows } = await db.query<AgentEventRow & { stack_id: string | null; event_data: Record<string, unknown>; gates: boolean }>(
    recordStatement([e.agentId, e.deploymentObjectId, e.eventType, e.status, e.message, JSON.stringify(event)]),
  );
  if (!rows[0]) return undefined;
  const { stack_id, event_data, gates, ...row } = rows[0];
  return { row, stackId: stack_id, eventData: event_data, gates };
}
