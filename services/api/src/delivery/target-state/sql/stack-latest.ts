import { prepared, type Queryable } from '@brokkr/db';
import { DEPLOYMENT_OBJECT_COLUMNS, type DeploymentObjectRow } from '../../../domain/deployment-object-row.ts';

/**
 * The shared part of every target state that holds a stack: its newest live object, as the
 * target-state query's `latest` picks it (sql/target-state.ts), and whether anything could make an
 * agent's answer differ from "that object": the stack is deleted (its marker has its own rules)
 * or a rollout exists for the object (agents of unreleased waves are held on a baseline), or each
 * agent gets its own render of it (migration 0026).
 */
const STACK_LATEST_SQL = `
SELECT s.deleted_at IS NOT NULL AS stack_deleted,
       EXISTS (SELECT 1 FROM rollouts r WHERE r.deployment_object_id = o.id) AS has_rollout,
       EXISTS (SELECT 1 FROM rendered_objects ro WHERE ro.deployment_object_id = o.id) AS per_agent,
       ${DEPLOYMENT_OBJECT_COLUMNS.split(', ')
         .map((c) => `o.${c}`)
         .join(', ')}
  FROM stacks s
  LEFT JOIN LATERAL (
    SELECT * FROM deployment_objects d
     WHERE d.stack_id = s.id AND d.deleted_at IS NULL
     ORDER BY d.sequence_id DESC
     LIMIT 1
  ) o ON true
 WHERE s.id = $1`;

const stackLatestStatement = prepared('brokkr_stack_latest', STACK_LATEST_SQL);

export type StackLatest =
  /** Every agent that holds the stack is served `row`. */
  | { kind: 'plain'; row: DeploymentObjectRow }
  /** No stack, no live object, a deleted stack or a rollout: each agent's answer must be read. */
  | { kind: 'per-agent' };

export async function queryStackLatest(db: Queryable, stackId: string): Promise<StackLatest> {
  const { rows } = await db.query<DeploymentObjectRow & { stack_deleted: boolean; has_rollout: boolean; per_agent: boolean }>(
    stackLatestStatement([stackId]),
  );
  const found = rows[0];
  if (!found || found.id === null || found.stack_deleted || found.has_rollout || found.per_agent) return { kind: 'per-agent' };
  const { stack_deleted: _deleted, has_rollout: _rollout, per_agent: _perAgent, ...row } = found;
  return { kind: 'plain', row };
}
