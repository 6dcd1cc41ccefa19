import type { Queryable } from '@brokkr/db';

/**
 * Per-agent state of one deployment object: every agent associated with its stack, plus any agent
 * that reported on it (an agent that lost the stack keeps its history), each with its latest
 * event and its health report.
 */

export interface ObjectAgentState {
  agent_id: string;
  name: string;
  cluster_name: string;
  status: string;
  last_heartbeat: Date | null;
  associated: boolean;
  last_event: { event_type: string; status: string; message: string | null; created_at: Date } | null;
  health: { status: string; summary: string | null; checked_at: Date } | null;
}

export interface ObjectEvent {
  id: string;
  agent_id: string;
  event_type: string;
  status: string;
  message: string | null;
  created_at: Date;
}

/** `generatorId` null = every agent (admin); otherwise only agents registered with it. */
export async function objectAgentStates(
  db: Queryable,
  objectId: string,
  options: { associatedIds: readonly string[]; generatorId: string | null; limit: number },
): Promise<{ agents: ObjectAgentState[]; total: number }> {
  const { associatedIds, generatorId, limit } = options;
  const { rows } = await db.query<ObjectAgentState & { total: number }>(
    `WITH ids AS (
       SELECT unnest($2::uuid[]) AS id
       UNION SELECT e.agent_id FROM agent_events e WHERE e.deployment_object_id = $1 AND e.deleted_at IS NULL
       UNION SELECT h.agent_id FROM deployment_health h WHERE h.deployment_object_id = $1
     )
     SELECT a.id AS agent_id, a.name, a.cluster_name, a.status, a.last_heartbeat,
            a.id = ANY($2::uuid[]) AS associated,
            (SELECT json_build_object('event_type', e.event_type, 'status', e.status, 'message', e.message, 'created_at', e.created_at)
               FROM agent_events e
              WHERE e.agent_id = a.id AND e.deployment_object_id = $1 AND e.deleted_at IS NULL
              ORDER BY e.created_at DESC, e.id DESC LIMIT 1) AS last_event,
            (SELECT json_build_object('status', h.status, 'summary', h.summary, 'checked_at', h.checked_at)
               FROM deployment_health h WHERE h.agent_id = a.id AND h.deployment_object_id = $1) AS health,
            count(*) OVER ()::int AS total
       FROM agents a JOIN ids ON ids.id = a.id
      WHERE a.deleted_at IS NULL
        AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM agent_generator_registrations r WHERE r.agent_id = a.id AND r.generator_id = $3))
      ORDER BY a.name, a.cluster_name, a.id
      LIMIT $4`,
    [objectId, associatedIds, generatorId, limit],
  );
  return { agents: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total ?? 0 };
}

export async function recentObjectEvents(
  db: Queryable,
  objectId: string,
  generatorId: string | null,
  limit: number,
): Promise<ObjectEvent[]> {
  const { rows } = await db.query<ObjectEvent>(
    `SELECT e.id, e.agent_id, e.event_type, e.status, e.message, e.created_at
       FROM agent_events e
      WHERE e.deployment_object_id = $1 AND e.deleted_at IS NULL
        AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM agent_generator_registrations r WHERE r.agent_id = e.agent_id AND r.generator_id = $2))
      ORDER BY e.created_at DESC, e.id DESC
      LIMIT $3`,
    [objectId, generatorId, limit],
  );
  return rows;
}
