import { prepared, type Queryable } from '@brokkr/db';

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
 * CONFLICT cannot touch one row twice in a statement). An unknown deployment object or agent is a
 * foreign-key violation (422).
 */
const upsertStatement = prepared(
  'brokkr_health_upsert',
  `
INSERT INTO deployment_health (agent_id, deployment_object_id, status, summary, checked_at)
SELECT $1::uuid, u.deployment_object_id, u.status, u.summary, u.checked_at
  FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
       AS u(deployment_object_id, status, summary, checked_at)
ON CONFLICT ON CONSTRAINT unique_agent_deployment_health DO UPDATE
   SET status = EXCLUDED.status, summary = EXCLUDED.summary, checked_at = EXCLUDED.checked_at`,
);

export async function upsertHealth(db: Queryable, agentId: string, records: HealthInput[]): Promise<void> {
  if (!records.length) return;
  await db.query(
    upsertStatement([
      agentId,
      records.map((r) => r.deploymentObjectId),
      records.map((r) => r.status),
      records.map((r) => r.summary),
      records.map((r) => r.checkedAt),
    ]),
  );
}
