import type { Queryable } from '@brokkr/db';

/** The read-only statements of deployment health. */

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
