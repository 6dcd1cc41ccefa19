import { prepared, type Queryable } from '@brokkr/db';
import type { DeploymentObjectRow } from '../../../domain/deployment-object-row.ts';
import { associationPairs } from '../../../domain/association.ts';
import { dependencyEdgesSql, dependencyReadySql, presentDependentsSql } from '../../../domain/stack-dependencies.ts';
import { rolloutHoldsSql } from '../../../domain/rollout-hold.ts';

/** The baseline object a rollout of the latest object `l` still serves this agent (domain/rollout-hold.ts), or no row. */
const HELD_BASELINE = `
      SELECT r.baseline_object_id FROM rollouts r
       WHERE r.deployment_object_id = l.id AND NOT l.stack_deleted AND ${rolloutHoldsSql('r', '$1')}`;

/**
 * The whole target state in ONE round trip, whatever the number of stacks: agents poll this
 * every few seconds, so it must not fan out into per-stack queries.
 *
 *   agent     the agent, only while it is live and ACTIVE (docs/compatibility.md: an inactive agent gets
 *             an empty target state, so every later CTE is empty too);
 *   stack_ids its associated stacks (domain/association.ts), deleted ones included;
 *   latest    per stack, the live object with the highest sequence_id: a LATERAL
 *             `ORDER BY sequence_id DESC LIMIT 1` walks the partial index
 *             deployment_objects (stack_id, sequence_id DESC) WHERE deleted_at IS NULL and reads
 *             one row per stack. For a soft-deleted stack only its deletion marker counts (the
 *             stack trigger retired every other object and inserted the marker live); a stack
 *             retired with its generator has no live object left and drops out;
 *   gated     `waiting`: the stack depends on another stack not ready for this agent yet
 *             (migration 0028, domain/stack-dependencies.ts). OFFSET 0 keeps the EXISTS a probe per
 *             stack (a semi join could judge every dependency of every stack), MATERIALIZED makes it
 *             one (inlined, `served` evaluated it twice): a stack without dependencies pays one probe
 *             of the stack_dependencies primary key, and one of stack_dependency_selectors (migration
 *             0031: dependencies by selector, dependencyEdgesSql). A deleted stack waits instead while a stack depending on it still has something on
 *             this agent (reverse-order deletion, presentDependentsSql), looked for only while the
 *             agent has not acknowledged the marker: the dependent goes first;
 *   served    the latest object, or the baseline a progressive rollout still holds the agent on;
 *             for a waiting stack, `k`: the newest of its objects this agent reported a SUCCESS for
 *             (nothing new arrives, nothing applied goes: a stack absent from a full answer would
 *             be deleted by the agent) or, when the agent never applied it, nothing at all; `k` is
 *             looked for only for a waiting stack (for a deleted one among its retired objects: its
 *             marker is its only live one). In incremental mode the kept object, already
 *             applied, is dropped by the filter below like any other.
 *
 * Then the "already handled" filter (docs/compatibility.md, deliberately unlike Brokkr):
 *   - a deleted stack's marker is served in both modes until the agent posts ANY event for it
 *     (it acknowledged the deletion, the stack is gone for good);
 *   - otherwise, in incremental mode only, an object is dropped once the agent reported a
 *     SUCCESS for it (upper-cased, as the deployment.applied emission compares); a FAILURE
 *     keeps it in the state, so the agent retries it.
 * The probe uses agent_events (agent_id, deployment_object_id) WHERE deleted_at IS NULL.
 *
 * Per-cluster content (migration 0026): an object rendered per agent (rendered_objects) is served
 * with this agent's render (agent_renders → renders), its YAML and checksum; without one (the agent
 * was targeted after the object was rendered, until rendering's sweep makes it) or when its render
 * failed, it is not served to this agent at all — never someone else's render, never a partial one.
 * Every other object is served as stored.
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
  SELECT d.id, si.stack_id, s.deleted_at IS NOT NULL AS stack_deleted
    FROM stack_ids si
    JOIN stacks s ON s.id = si.stack_id
    CROSS JOIN LATERAL (
      SELECT o.id, o.is_deletion_marker FROM deployment_objects o
       WHERE o.stack_id = si.stack_id AND o.deleted_at IS NULL
       ORDER BY o.sequence_id DESC
       LIMIT 1
    ) d
   WHERE s.deleted_at IS NULL OR d.is_deletion_marker
),
gated AS MATERIALIZED (
  SELECT l.*, CASE WHEN l.stack_deleted THEN NOT EXISTS (
                     SELECT 1 FROM agent_events de
                      WHERE de.agent_id = $1 AND de.deployment_object_id = l.id AND de.deleted_at IS NULL)
                   AND EXISTS (${presentDependentsSql('l.stack_id', '$1')} OFFSET 0)
              ELSE EXISTS (
           SELECT 1 FROM (${dependencyEdgesSql('l.stack_id', '$1')}) sd
            WHERE NOT ${dependencyReadySql('sd', '$1')}
           OFFSET 0) END AS waiting
    FROM latest l
),
served AS (
  SELECT coalesce(k.id, h.baseline_object_id, l.id) AS id, l.stack_deleted AND NOT l.waiting AS stack_deleted,
         NOT l.waiting AND h.baseline_object_id IS NOT NULL AS held
    FROM gated l
    LEFT JOIN LATERAL (
      SELECT k.id FROM deployment_objects k
       WHERE l.waiting AND k.stack_id = l.stack_id AND (k.deleted_at IS NULL) = NOT l.stack_deleted
         AND EXISTS (SELECT 1 FROM agent_events ke
                      WHERE ke.agent_id = $1 AND ke.deployment_object_id = k.id AND ke.deleted_at IS NULL
                        AND upper(ke.status) = 'SUCCESS')
       ORDER BY k.sequence_id DESC LIMIT 1) k ON true
    LEFT JOIN LATERAL (${HELD_BASELINE}) h ON true
   WHERE NOT l.waiting OR k.id IS NOT NULL
)
SELECT o.id, o.created_at, o.updated_at, o.deleted_at, o.sequence_id, o.stack_id,
       coalesce(r.yaml_content, o.yaml_content) AS yaml_content, coalesce(r.yaml_checksum, o.yaml_checksum) AS yaml_checksum,
       o.submitted_at, o.is_deletion_marker
  FROM served l
  JOIN deployment_objects o ON o.id = l.id
  LEFT JOIN rendered_objects ro ON ro.deployment_object_id = o.id
  LEFT JOIN agent_renders ar ON ro.deployment_object_id IS NOT NULL AND ar.agent_id = $1 AND ar.deployment_object_id = o.id
  LEFT JOIN renders r ON r.key = ar.render_key
 WHERE NOT EXISTS (
   SELECT 1 FROM agent_events e
    WHERE e.agent_id = $1 AND e.deployment_object_id = l.id AND e.deleted_at IS NULL
      AND (l.stack_deleted OR (NOT $2::boolean AND NOT l.held AND upper(e.status) = 'SUCCESS'))
 )
   AND (ro.deployment_object_id IS NULL OR r.key IS NOT NULL)
 ORDER BY o.sequence_id DESC`;

// Prepared: planning this statement costs several times more than running it.
const targetStateStatement = prepared('brokkr_target_state', TARGET_STATE_SQL);

export async function queryTargetState(db: Queryable, agentId: string, full: boolean): Promise<DeploymentObjectRow[]> {
  const { rows } = await db.query<DeploymentObjectRow>(targetStateStatement([agentId, full]));
  return rows;
}
