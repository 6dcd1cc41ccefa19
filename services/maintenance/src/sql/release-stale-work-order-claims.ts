import type { TaskClient } from './queryable.ts';

/**
 * Stale claims (contract §6): `CLAIMED` orders whose claimed_at + claim_timeout_seconds has
 * passed go back to `PENDING` with claimed_by/claimed_at cleared; retry_count is unchanged.
 * The agent completing the order at the same moment locks the row (its transaction moves the
 * order to the log and deletes it): SKIP LOCKED never waits on it and the outer WHERE re-checks
 * the claim, so whichever commits first wins and a second run changes nothing.
 */
export async function releaseStaleWorkOrderClaims(db: TaskClient, limit: number): Promise<number> {
  const result = await db.query(
    `WITH stale AS (
       SELECT id FROM work_orders
        WHERE status = 'CLAIMED'
          AND claimed_at + make_interval(secs => claim_timeout_seconds) < now()
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE work_orders w
        SET status = 'PENDING', claimed_by = NULL, claimed_at = NULL
       FROM stale
      WHERE w.id = stale.id
        AND w.status = 'CLAIMED'
        AND w.claimed_at + make_interval(secs => w.claim_timeout_seconds) < now()`,
    [limit],
  );
  return result.rowCount ?? 0;
}
