import type { Queryable } from '@brokkr/db';
import { DIAGNOSTIC_REQUEST_COLUMNS, type DiagnosticRequestRow } from './diagnostic-row.ts';

export interface NewDiagnosticRequest {
  agentId: string;
  deploymentObjectId: string;
  requestedBy: string | null;
  retentionMinutes: number;
}

/** A `pending` request that expires `retentionMinutes` after its creation. */
export async function insertDiagnosticRequest(db: Queryable, input: NewDiagnosticRequest): Promise<DiagnosticRequestRow> {
  const { rows } = await db.query<DiagnosticRequestRow>(
    `INSERT INTO diagnostic_requests (agent_id, deployment_object_id, requested_by, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(mins => $4))
     RETURNING ${DIAGNOSTIC_REQUEST_COLUMNS}`,
    [input.agentId, input.deploymentObjectId, input.requestedBy, input.retentionMinutes],
  );
  return rows[0]!;
}
