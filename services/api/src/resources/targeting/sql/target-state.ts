import { prepared, type Queryable } from '@brokkr/db';
import type { DeploymentObjectRow } from '../../deployment-objects/sql/deployment-object-row.ts';
import { associationPairs } from './association.ts';

/**
 * The whole target state in ONE round trip, whatever the number of stacks: agents poll this
 * every few seconds, so it must not fan out into per-stack queries.
 *
 *   agent     the agent, only while it is live and ACTIVE (DESIGN §4: an inactive agent gets
 *             an empty target state, so every later CTE is empty too);
 *   stack_ids its associated stacks (association.ts), deleted ones included;
 *   latest    per stack, the live object with the highest sequence_id: a LATERAL
 *             `ORDER BY sequence_id DESC LIMIT 1` walks the partial index
 *             deployment_objects (stack_id, sequence_id DESC) WHERE deleted_at IS NULL and reads
 *             one row per stack. For a soft-deleted stack only its deletion marker counts (the
 *             stack trigger retired every other object and inserted the marker live); a stack
 *             retired with its generator has no live object left and drops out.
 *
 * Then the "already handled" filter (DESIGN §4, deliberately unlike Brokkr):
 *   - a deleted stack's marker is served in both modes until the agent posts ANY event for it
 *     (it acknowledged the deletion, the stack is gone for good);
 *   - otherwise, in incremental mode only, an object is dropped once the agent reported a
 *     SUCCESS for it (upper-cased, as the deployment.applied emission compares); a FAILURE
 *     keeps it in the state, so the agent retries it.
 * The probe uses agent_events (agent_id, deployment_object_id) WHERE deleted_at IS NULL.
 *
 * $1 = agent id, $2 = true for mode=full.
 */
export const TARGET_STATE_SQL = `
WITH agent AS (
  SELECT a.id FROM agents a
   WHERE a.id = $1 AND a.deleted_at IS NULL AND a.status = 'ACTIVE'
),
stack_ids AS (
  SELECT DISTINCT p.stack_id FROM (${associationPairs('agent')}) p
),
latest AS (
  SELECT d.*, s.deleted_at IS NOT NULL AS stack_deleted
    FROM stack_ids si
    JOIN stacks s ON s.id = si.stack_id
    CROSS JOIN LATERAL (
      SELECT * FROM deployment_objects o
       WHERE o.stack_id = si.stack_id AND o.deleted_at IS NULL
       ORDER BY o.sequence_id DESC
       LIMIT 1
    ) d
   WHERE s.deleted_at IS NULL OR d.is_deletion_marker
)
SELECT l.id, l.created_at, l.updated_at, l.deleted_at, l.sequence_id, l.stack_id,
       l.yaml_content, l.yaml_checksum, l.submitted_at, l.is_deletion_marker
  FROM latest l
 WHERE NOT EXISTS (
   SELECT 1 FROM agent_events e
    WHERE e.agent_id = $1 AND e.deployment_object_id = l.id AND e.deleted_at IS NULL
      AND (l.stack_deleted OR (NOT $2::boolean AND upper(e.status) = 'SUCCESS'))
 )
 ORDER BY l.sequence_id DESC`;

// Prepared: planning this statement costs several times more than running it.
const targetStateStatement = prepared('brokkr_target_state', TARGET_STATE_SQL);

export async function queryTargetState(db: Queryable, agentId: string, full: boolean): Promise<DeploymentObjectRow[]> {
  const { rows } = await db.query<DeploymentObjectRow>(targetStateStatement([agentId, full]));
  return rows;
}
