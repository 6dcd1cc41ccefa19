import { prepared, type Queryable } from '@brokkr/db';
import { servedToAgent } from '../../../domain/association.ts';

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
)
SELECT deployment_object_id AS refused FROM refused`,
);

/** Stores the batch; the first object the agent is not served (nothing stored then), else undefined. */
export async function upsertHealth(db: Queryable, agentId: string, records: HealthInput[]): Promise<string | undefined> {
  if (!records.length) return undefined;
  const { rows } = await db.query<{ refused: string }>(
    upsertStatement([
      agentId,
      records.map((r) => r.deploymentObjectId),
      records.map((r) => r.status),
      records.map((r) => r.summary),
      records.map((r) => r.checkedAt),
    ]),
  );
  return rows[0]?.refused;
}
