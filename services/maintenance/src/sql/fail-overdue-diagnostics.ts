import type { TaskClient } from './queryable.ts';

/**
 * Expiry sweep, part 2: `claimed` requests past expires_at become `failed`
 * with completed_at = now (claimed_at kept). A result arriving at the same moment locks the row
 * to mark it `completed`; SKIP LOCKED and the re-checked `claimed` state mean whichever commits
 * first wins and the other finds nothing to do.
 */
export async function failOverdueDiagnostics(db: TaskClient, limit: number): Promise<number> {
  const result = await db.query(
    `WITH overdue AS (
       SELECT id FROM diagnostic_requests
        WHERE status = 'claimed' AND expires_at < now()
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE diagnostic_requests r
        SET status = 'failed', completed_at = now()
       FROM overdue
      WHERE r.id = overdue.id AND r.status = 'claimed'`,
    [limit],
  );
  return result.rowCount ?? 0;
}
