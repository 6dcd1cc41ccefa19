import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import type { DiagnosticRequestRow } from './sql/diagnostic-row.ts';
import { findDiagnosticRequest } from './sql/queries.ts';

export const diagnosticNotFound = errorKind(404, 'diagnostic_not_found', 'Diagnostic request not found');
export const diagnosticNotOwned = errorKind(403, 'diagnostic_not_owned', 'The diagnostic request belongs to another agent');
export const diagnosticAlreadyClaimed = errorKind(409, 'diagnostic_already_claimed', 'The diagnostic request is not pending');
export const diagnosticNotClaimed = errorKind(409, 'diagnostic_not_claimed', 'The diagnostic request is not claimed');
export const invalidDiagnosticRequest = errorKind(400, 'invalid_diagnostic_request', 'Invalid diagnostic request');
export const invalidDiagnosticResult = errorKind(400, 'invalid_diagnostic_result', 'Invalid diagnostic result');

/** The request, or 404 `diagnostic_not_found` (checked before who may see it, as Brokkr does). */
export const fetchDiagnosticRequest = raising(async (db: Queryable, id: string): Promise<DiagnosticRequestRow> => {
  const row = await findDiagnosticRequest(db, id);
  if (!row) throw diagnosticNotFound();
  return row;
}, diagnosticNotFound);

/** Read and claim: an admin or the agent the request is for; anyone else (other agents, generators) gets 403. */
export const requireAdminOrTargetAgent = raising((identity: Identity, request: DiagnosticRequestRow): void => {
  if (identity.admin) return;
  if (identity.agent !== request.agent_id) throw diagnosticNotOwned();
}, diagnosticNotOwned);

/** The result: only the agent the request is for (an admin too gets 403, as in Brokkr). */
export const requireTargetAgent = raising((identity: Identity, request: DiagnosticRequestRow): void => {
  if (identity.agent !== request.agent_id) throw diagnosticNotOwned.with('Only the agent the request is for may submit its result');
}, diagnosticNotOwned);
