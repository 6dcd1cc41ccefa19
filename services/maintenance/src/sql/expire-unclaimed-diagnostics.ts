import type { TaskClient } from './queryable.ts';

/**
 * Expiry sweep, part 1: `pending` requests past expires_at become `expired`.
 * The agent's claim (`status = 'pending'` → `claimed`) and this statement both lock the row;
 * with SKIP LOCKED we never wait on a claim in progress, and the outer WHERE re-checks
 * `pending`, so a request claimed first is left alone and a second run changes nothing.
 */
export async function expireUnclaimedDiagnostics(db: TaskClient, limit: number): Promise<number> {
  const result = await db.query(
    `WITH overdue AS (
       SELECT id FROM diagnostic_requests
        WHERE status = 'pending' AND expires_at < now()
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE diagnostic_requests r
        SET status = 'expired'
       FROM overdue
      WHERE r.id = overdue.id AND r.status = 'pending'`,
    [limit],
  );
  return result.rowCount ?? 0;
}
