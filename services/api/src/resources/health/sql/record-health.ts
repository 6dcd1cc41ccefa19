import { prepared, type Queryable } from '@brokkr/db';
import { servedToAgent } from '../../../domain/association.ts';
import { gatesOnObjectSql } from '../../../domain/stack-dependencies.ts';

export interface HealthInput {
  deploymentObjectId: string;
  status: string;
  summary: string | null;
  checkedAt: string;
}

/**
 * One upsert for the whole batch (one round trip whatever its size) on
 * unique_agent_deployment_health: a newer report replaces status, summary and checked_at;
 * updated_at moves through the table's trigger. The caller removes duplicate ids first (ON
 * CONFLICT cannot touch one row twice in a statement). The batch is stored only when every object
 * in it is one the agent is or was served (domain/association.ts): one that is not (or an unknown
 * one) stores nothing and is returned, as an unknown object broke the whole batch before.
 *
 * `moved`: the objects of the batch whose healthy-or-not changed and that some stack depends on
 * (domain/stack-dependencies.ts, `ready_when: healthy`), compared with the rows as they were
 * before the upsert (the statement's snapshot). A report that changes nothing there, the usual
 * periodic one, returns none; a batch on stacks nobody depends on costs one index probe per object.
 */
const upsertStatement = prepared(
  'brokkr_health_upsert',
  `
WITH input AS (
  SELECT u.deployment_object_id, u.status, u.summary, u.checked_at
    FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[]) AS u(deployment_object_id, status, summary, checked_at)
),
refused AS (
  SELECT i.deployment_object_id FROM input i WHERE NOT ${servedToAgent('i.deployment_object_id', '$1::uuid')} LIMIT 1
),
stored AS (
  INSERT INTO deployment_health (agent_id, deployment_object_id, status, summary, checked_at)
  SELECT $1::uuid, i.deployment_object_id, i.status, i.summary, i.checked_at
    FROM input i
   WHERE NOT EXISTS (SELECT 1 FROM refused)
  ON CONFLICT ON CONSTRAINT unique_agent_deployment_health DO UPDATE
     SET status = EXCLUDED.status, summary = EXCLUDED.summary, checked_at = EXCLUDED.checked_at
),
moved AS (
  SELECT i.deployment_object_id FROM input i
    LEFT JOIN deployment_health p ON p.agent_id = $1::uuid AND p.deployment_object_id = i.deployment_object_id
   WHERE NOT EXISTS (SELECT 1 FROM refused)
     AND (i.status = 'healthy') IS DISTINCT FROM (coalesce(p.status, '') = 'healthy')
     AND ${gatesOnObjectSql('i.deployment_object_id')}
)
SELECT (SELECT deployment_object_id FROM refused) AS refused,
       coalesce((SELECT array_agg(deployment_object_id) FROM moved), '{}') AS moved`,
);

/**
 * Stores the batch: `refused` is the first object the agent is not served (nothing stored then),
 * `moved` the objects whose health others wait on that became healthy or stopped being so.
 */
export async function upsertHealth(
  db: Queryable,
  agentId: string,
  records: HealthInput[],
): Promise<{ refused: string | undefined; moved: string[] }> {
  if (!records.length) return { refused: undefined, moved: [] };
  const { rows } = await db.query<{ refused: string | null; moved: string[] }>(
    upsertStatement([
      agentId,
      records.map((r) => r.deploymentObjectId),
      records.map((r) => r.status),
      records.map((r) => r.summary),
      records.map((r) => r.checkedAt),
    ]),
  );
  return { refused: rows[0]?.refused ?? undefined, moved: rows[0]?.moved ?? [] };
}
