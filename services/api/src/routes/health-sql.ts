import type { Queryable } from '@brokkr/db';

export interface HealthRow {
  id: string;
  agent_id: string;
  deployment_object_id: string;
  status: string;
  summary: string | null;
  checked_at: Date;
  created_at: Date;
  updated_at: Date;
}

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
const UPSERT_HEALTH_SQL = `
INSERT INTO deployment_health (agent_id, deployment_object_id, status, summary, checked_at)
SELECT $1::uuid, u.deployment_object_id, u.status, u.summary, u.checked_at
  FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
       AS u(deployment_object_id, status, summary, checked_at)
ON CONFLICT ON CONSTRAINT unique_agent_deployment_health DO UPDATE
   SET status = EXCLUDED.status, summary = EXCLUDED.summary, checked_at = EXCLUDED.checked_at`;

export async function upsertHealth(db: Queryable, agentId: string, records: HealthInput[]): Promise<void> {
  if (!records.length) return;
  await db.query(UPSERT_HEALTH_SQL, [
    agentId,
    records.map((r) => r.deploymentObjectId),
    records.map((r) => r.status),
    records.map((r) => r.summary),
    records.map((r) => r.checkedAt),
  ]);
}

const COLUMNS = 'h.id, h.agent_id, h.deployment_object_id, h.status, h.summary, h.checked_at, h.created_at, h.updated_at';

export async function healthOfDeploymentObject(db: Queryable, deploymentObjectId: string): Promise<HealthRow[]> {
  const { rows } = await db.query<HealthRow>(
    `SELECT ${COLUMNS} FROM deployment_health h WHERE h.deployment_object_id = $1 ORDER BY h.checked_at DESC, h.id`,
    [deploymentObjectId],
  );
  return rows;
}

/** Health rows of the stack's live (non-deleted) deployment objects. */
export async function healthOfStack(db: Queryable, stackId: string): Promise<HealthRow[]> {
  const { rows } = await db.query<HealthRow>(
    `SELECT ${COLUMNS}
       FROM deployment_health h
       JOIN deployment_objects d ON d.id = h.deployment_object_id
      WHERE d.stack_id = $1 AND d.deleted_at IS NULL
      ORDER BY d.sequence_id DESC, h.checked_at DESC`,
    [stackId],
  );
  return rows;
}
