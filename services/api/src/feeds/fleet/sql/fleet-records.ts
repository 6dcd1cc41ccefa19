import type { Queryable } from '@brokkr/db';
import { associationPairs, targetsAgent } from '../../../domain/association.ts';

/** One agent's fleet aggregates as the database knows them (the WebSocket presence is added by fleet-record.ts). */
export interface FleetRow {
  agent_id: string;
  name: string;
  cluster_name: string;
  status: string;
  last_heartbeat: Date | null;
  heartbeat_age_seconds: number | null;
  pending_object_count: number;
  pending_work_orders: number;
  claimed_work_orders: number;
  last_event_at: Date | null;
  seconds_since_last_event: number | null;
  health_failing: number;
  health_degraded: number;
  k8s_reachable: boolean | null;
  k8s_api_latency_ms: number | null;
}

// GREATEST ignores NULLs, so a never-set timestamp must stay NULL explicitly.
const age = (column: string) =>
  `CASE WHEN ${column} IS NULL THEN NULL ELSE floor(greatest(0, extract(epoch FROM now() - ${column})))::int END`;

/**
 * Every live agent's fleet record in one statement, filtered to some agents
 * ($1) and/or to the agents registered with one generator ($2, the `pak_id` tenant filter).
 *
 *   pending_object_count  per associated live stack, 1 when its newest live deployment object has
 *                         no SUCCESS event from the agent: what the incremental target state would
 *                         hand the agent if it were ACTIVE (a FAILURE keeps the object pending, as
 *                         the target state retries it — Brokkr counts any event as done);
 *   health_*              only rows about the newest live object of a stack (Brokkr also counts
 *                         rows of deleted and superseded objects, so its counts never drop).
 */
const FLEET_SQL = `
WITH sel AS (
  SELECT a.* FROM agents a
   WHERE a.deleted_at IS NULL
     AND ($1::uuid[] IS NULL OR a.id = ANY ($1))
     AND ($2::uuid IS NULL OR EXISTS (
       SELECT 1 FROM agent_generator_registrations r WHERE r.agent_id = a.id AND r.generator_id = $2))
),
pairs AS (SELECT DISTINCT p.agent_id, p.stack_id FROM (${associationPairs('sel')}) p),
pending AS (
  SELECT p.agent_id, count(*)::int AS n
    FROM pairs p
    JOIN stacks s ON s.id = p.stack_id AND s.deleted_at IS NULL
    CROSS JOIN LATERAL (
      SELECT o.id FROM deployment_objects o
       WHERE o.stack_id = p.stack_id AND o.deleted_at IS NULL
       ORDER BY o.sequence_id DESC LIMIT 1
    ) d
   WHERE NOT EXISTS (
     SELECT 1 FROM agent_events e
      WHERE e.agent_id = p.agent_id AND e.deployment_object_id = d.id AND e.deleted_at IS NULL AND upper(e.status) = 'SUCCESS')
   GROUP BY p.agent_id
)
SELECT a.id AS agent_id, a.name, a.cluster_name, a.status, a.last_heartbeat,
       ${age('a.last_heartbeat')} AS heartbeat_age_seconds,
       coalesce(pending.n, 0) AS pending_object_count,
       (SELECT count(*)::int FROM work_orders w WHERE w.status = 'PENDING' AND ${targetsAgent('a.id')}) AS pending_work_orders,
       (SELECT count(*)::int FROM work_orders w WHERE w.status = 'CLAIMED' AND w.claimed_by = a.id) AS claimed_work_orders,
       ev.last_event_at,
       ${age('ev.last_event_at')} AS seconds_since_last_event,
       coalesce(hl.failing, 0) AS health_failing,
       coalesce(hl.degraded, 0) AS health_degraded,
       a.k8s_reachable, a.k8s_api_latency_ms
  FROM sel a
  LEFT JOIN pending ON pending.agent_id = a.id
  LEFT JOIN LATERAL (
    SELECT max(e.created_at) AS last_event_at FROM agent_events e WHERE e.agent_id = a.id AND e.deleted_at IS NULL
  ) ev ON true
  LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE h.status = 'failing')::int AS failing,
           count(*) FILTER (WHERE h.status = 'degraded')::int AS degraded
      FROM deployment_health h
      JOIN deployment_objects o ON o.id = h.deployment_object_id AND o.deleted_at IS NULL
     WHERE h.agent_id = a.id
       AND NOT EXISTS (
         SELECT 1 FROM deployment_objects n WHERE n.stack_id = o.stack_id AND n.deleted_at IS NULL AND n.sequence_id > o.sequence_id)
  ) hl ON true
 ORDER BY a.name, a.cluster_name, a.id`;

export async function queryFleetRows(db: Queryable, filter: { agentIds?: string[]; generatorId?: string }): Promise<FleetRow[]> {
  const { rows } = await db.query<FleetRow>(FLEET_SQL, [filter.agentIds ?? null, filter.generatorId ?? null]);
  return rows;
}
