import type { Queryable } from '@brokkr/db';
import { agentIsActive } from '../../../domain/active-agent.ts';
import { DIAGNOSTIC_REQUEST_COLUMNS, type DiagnosticRequestRow } from './diagnostic-row.ts';

/**
 * The claim: one compare-and-set from `pending` to `claimed`. Of concurrent claimers
 * (two agent processes with the same identity, an admin and the agent) exactly one gets the row,
 * so a request is collected once. A request past its expiry is not claimable even before the
 * maintenance sweep marks it `expired` (Brokkr claims it and lets the sweep fail it later), and
 * a request of an agent that is not ACTIVE is not claimable either (inactive agents get no work).
 * Undefined when nothing changed: the caller reads the row again to say why.
 */
export async function claimDiagnosticRequest(db: Queryable, id: string): Promise<DiagnosticRequestRow | undefined> {
  const { rows } = await db.query<DiagnosticRequestRow>(
    `UPDATE diagnostic_requests
        SET status = 'claimed', claimed_at = now()
      WHERE id = $1 AND status = 'pending' AND expires_at > now() AND ${agentIsActive('diagnostic_requests.agent_id')}
      RETURNING ${DIAGNOSTIC_REQUEST_COLUMNS}`,
    [id],
  );
  return rows[0];
}
