import type { TaskClient } from './queryable.ts';

/**
 * Diagnostics cleanup: hard-deletes up to `limit` requests in a final state
 * (`expired`, `completed`, `failed`) created more than `maxAgeHours` ago; their results go with
 * them through ON DELETE CASCADE. Final rows are not updated by anyone, SKIP LOCKED only keeps
 * the statement from ever waiting.
 */
export async function deleteFinishedDiagnostics(db: TaskClient, maxAgeHours: number, limit: number): Promise<number> {
  const result = await db.query(
    `WITH doomed AS (
       SELECT id FROM diagnostic_requests
        WHERE status IN ('expired', 'completed', 'failed')
          AND created_at < now() - make_interval(hours => $1)
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     DELETE FROM diagnostic_requests r USING doomed WHERE r.id = doomed.id`,
    [maxAgeHours, limit],
  );
  return result.rowCount ?? 0;
}
