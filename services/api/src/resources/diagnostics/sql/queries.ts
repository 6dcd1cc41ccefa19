import type { Queryable } from '@brokkr/db';
import { agentIsActive } from '../../../domain/active-agent.ts';
import {
  DIAGNOSTIC_REQUEST_COLUMNS,
  DIAGNOSTIC_RESULT_COLUMNS,
  type DiagnosticRequestRow,
  type DiagnosticResultRow,
} from './diagnostic-row.ts';

/** The read-only statements of diagnostics. */

export async function findDiagnosticRequest(db: Queryable, id: string): Promise<DiagnosticRequestRow | undefined> {
  const { rows } = await db.query<DiagnosticRequestRow>(`SELECT ${DIAGNOSTIC_REQUEST_COLUMNS} FROM diagnostic_requests WHERE id = $1`, [
    id,
  ]);
  return rows[0];
}

/** The result of a request; a request has at most one (the result moves it out of `claimed` in the same transaction). */
export async function findDiagnosticResult(db: Queryable, requestId: string): Promise<DiagnosticResultRow | undefined> {
  const { rows } = await db.query<DiagnosticResultRow>(
    `SELECT ${DIAGNOSTIC_RESULT_COLUMNS} FROM diagnostic_results WHERE request_id = $1 ORDER BY created_at LIMIT 1`,
    [requestId],
  );
  return rows[0];
}

/** The agent's work: `pending` and not yet expired, oldest first; none while the agent is not ACTIVE. */
export async function listPendingDiagnostics(db: Queryable, agentId: string): Promise<DiagnosticRequestRow[]> {
  const { rows } = await db.query<DiagnosticRequestRow>(
    `SELECT ${DIAGNOSTIC_REQUEST_COLUMNS} FROM diagnostic_requests
      WHERE agent_id = $1 AND status = 'pending' AND expires_at > now() AND ${agentIsActive('$1::uuid')}
      ORDER BY created_at ASC, id`,
    [agentId],
  );
  return rows;
}

/** A live (not soft-deleted) deployment object exists. */
export async function deploymentObjectExists(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM deployment_objects WHERE id = $1 AND deleted_at IS NULL', [id]);
  return (rowCount ?? 0) > 0;
}

/** A live (not soft-deleted) agent exists. */
export async function agentExists(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM agents WHERE id = $1 AND deleted_at IS NULL', [id]);
  return (rowCount ?? 0) > 0;
}
