import { prepared, type Queryable } from '@brokkr/db';
import { dependentsOfSql } from '../../../domain/dependency-selectors.ts';
import { storedRenders } from '../../../domain/stored-renders.ts';
import { DEPLOYMENT_OBJECT_COLUMNS, type DeploymentObjectRow } from '../../../domain/deployment-object-row.ts';

/**
 * The shared part of every target state that holds a stack: its newest live object, as the
 * target-state query's `latest` picks it (sql/target-state.ts), and whether anything could make an
 * agent's answer differ from "that object": the stack is deleted (its marker has its own rules)
 * or a rollout exists for the object (agents of unreleased waves are held on a baseline), or each
 * agent gets its own render of it (migration 0026), or the stack takes part in a dependency
 * (migration 0028: a dependent stack is held back where what it needs is not ready, and a new
 * object of a stack others depend on may hold them back again; migration 0031: by selector too).
 */
const STACK_LATEST_SQL = `
SELECT s.deleted_at IS NOT NULL AS stack_deleted,
       EXISTS (SELECT 1 FROM rollouts r WHERE r.deployment_object_id = o.id) AS has_rollout,
       EXISTS (SELECT 1 FROM rendered_objects ro WHERE ro.deployment_object_id = o.id) AS per_agent,
       EXISTS (SELECT 1 FROM stack_dependencies sd WHERE sd.stack_id = s.id)
         OR EXISTS (SELECT 1 FROM stack_dependency_selectors ss WHERE ss.stack_id = s.id)
         OR EXISTS (${dependentsOfSql('s.id')}) AS dependencies,
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

/**
 * Which render each agent gets of an object rendered per agent, and each distinct render once:
 * 10,000 agents in 10 distinct renders read 10,000 short rows and 10 renders, not 10,000 YAMLs.
 */
const agentRenderKeysStatement = prepared(
  'brokkr_stack_latest_render_keys',
  'SELECT agent_id, render_key FROM agent_renders WHERE deployment_object_id = $1 AND render_key IS NOT NULL',
);

export type StackLatest =
  /** Every agent that holds the stack is served `row`. */
  | { kind: 'plain'; row: DeploymentObjectRow }
  /** Each agent that holds the stack is served its own render of the newest object: `rows` by agent id (none: read its answer). */
  | { kind: 'rendered'; rows: Map<string, DeploymentObjectRow> }
  /** No stack, no live object, a deleted stack, a rollout or a dependency: each agent's answer must be read. */
  | { kind: 'per-agent' };

/** The object's row once per distinct render, by agent (agent ids in lower case). */
async function renderedRows(db: Queryable, row: DeploymentObjectRow): Promise<Map<string, DeploymentObjectRow>> {
  const { rows: keys } = await db.query<{ agent_id: string; render_key: string }>(agentRenderKeysStatement([row.id]));
  const distinct = [...new Set(keys.map((k) => k.render_key))];
  const renders = await storedRenders(db, distinct);
  const byKey = new Map(renders.map((r) => [r.key, { ...row, yaml_content: r.yaml_content, yaml_checksum: r.yaml_checksum }]));
  const byAgent = new Map<string, DeploymentObjectRow>();
  for (const k of keys) {
    const own = byKey.get(k.render_key);
    if (own) byAgent.set(k.agent_id, own);
  }
  return byAgent;
}

export async function queryStackLatest(db: Queryable, stackId: string): Promise<StackLatest> {
  const { rows } = await db.query<
    DeploymentObjectRow & { stack_deleted: boolean; has_rollout: boolean; per_agent: boolean; dependencies: boolean }
  >(stackLatestStatement([stackId]));
  const found = rows[0];
  if (!found || found.id === null || found.stack_deleted || found.has_rollout || found.dependencies) return { kind: 'per-agent' };
  const { stack_deleted: _deleted, has_rollout: _rollout, per_agent: perAgent, dependencies: _dependencies, ...row } = found;
  return perAgent ? { kind: 'rendered', rows: await renderedRows(db, row) } : { kind: 'plain', row };
}
