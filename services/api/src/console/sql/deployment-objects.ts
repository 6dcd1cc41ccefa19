import type { Queryable } from '@brokkr/db';
import type { HealthCounts } from './fleet.ts';

/** The console's stack page: one page of a stack's live deployment objects, without their YAML. */

export interface ObjectSummary {
  id: string;
  sequence_id: string;
  yaml_checksum: string;
  created_at: Date;
  submitted_at: Date;
  is_deletion_marker: boolean;
  /** Agents whose latest event for the object is a SUCCESS / anything else. */
  applied_agents: number;
  failed_agents: number;
  health: HealthCounts;
}

export async function stackObjectsPage(db: Queryable, stackId: string, limit: number, offset: number): Promise<ObjectSummary[]> {
  const { rows } = await db.query<Omit<ObjectSummary, 'health'> & HealthCounts>(
    `SELECT d.id, d.sequence_id::text AS sequence_id, d.yaml_checksum, d.created_at, d.submitted_at, d.is_deletion_marker,
            ev.applied_agents, ev.failed_agents, hc.healthy, hc.degraded, hc.failing, hc.unknown
       FROM deployment_objects d
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE upper(last.status) = 'SUCCESS')::int AS applied_agents,
                count(*) FILTER (WHERE upper(last.status) <> 'SUCCESS')::int AS failed_agents
           FROM (SELECT DISTINCT ON (e.agent_id) e.status
                   FROM agent_events e
                  WHERE e.deployment_object_id = d.id AND e.deleted_at IS NULL
                  ORDER BY e.agent_id, e.created_at DESC, e.id DESC) last) ev
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE h.status = 'healthy')::int AS healthy,
                count(*) FILTER (WHERE h.status = 'degraded')::int AS degraded,
                count(*) FILTER (WHERE h.status = 'failing')::int AS failing,
                count(*) FILTER (WHERE h.status NOT IN ('healthy', 'degraded', 'failing'))::int AS unknown
           FROM deployment_health h WHERE h.deployment_object_id = d.id) hc
      WHERE d.stack_id = $1 AND d.deleted_at IS NULL
      ORDER BY d.sequence_id DESC
      LIMIT $2 OFFSET $3`,
    [stackId, limit, offset],
  );
  return rows.map(({ healthy, degraded, failing, unknown, ...o }) => ({ ...o, health: { healthy, degraded, failing, unknown } }));
}

export async function countStackObjects(db: Queryable, stackId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM deployment_objects WHERE stack_id = $1 AND deleted_at IS NULL',
    [stackId],
  );
  return rows[0]?.n ?? 0;
}
