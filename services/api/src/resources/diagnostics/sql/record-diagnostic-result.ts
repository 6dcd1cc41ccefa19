import type { Queryable } from '@brokkr/db';
import { DIAGNOSTIC_RESULT_COLUMNS, type DiagnosticResultRow } from './diagnostic-row.ts';

export interface DiagnosticResultInput {
  podStatuses: string;
  events: string;
  logTails: string | null;
  collectedAt: string;
}

/**
 * The result: marks a `claimed` request `completed` and stores the payloads, in one statement.
 * The compare-and-set on `claimed` makes a second result (a retried POST, a second agent process,
 * maintenance failing it at the same moment) find nothing: undefined, and nothing is stored.
 */
export async function recordDiagnosticResult(
  db: Queryable,
  requestId: string,
  input: DiagnosticResultInput,
): Promise<DiagnosticResultRow | undefined> {
  const { rows } = await db.query<DiagnosticResultRow>(
    `WITH done AS (
       UPDATE diagnostic_requests SET status = 'completed', completed_at = now()
        WHERE id = $1 AND status = 'claimed'
        RETURNING id
     )
     INSERT INTO diagnostic_results (request_id, pod_statuses, events, log_tails, collected_at)
     SELECT done.id, $2, $3, $4, $5 FROM done
     RETURNING ${DIAGNOSTIC_RESULT_COLUMNS}`,
    [requestId, input.podStatuses, input.events, input.logTails, input.collectedAt],
  );
  return rows[0];
}
