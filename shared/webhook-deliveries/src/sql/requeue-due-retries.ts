import type { Queryable } from '@brokkr/db';

/**
 * failed (retry due) → pending, by the maintenance reaper.
 * `failed` deliveries whose backoff has passed (next_retry_at <= now) go back to `pending`
 * with next_retry_at cleared, as Brokkr's delivery worker does. The claims take
 * due retries themselves too; this keeps `failed` meaning "waiting for its retry time".
 * Row locks: SKIP LOCKED in the CTE, held for this statement only; the outer WHERE re-checks
 * the state, so running it twice changes nothing more.
 */
export async function requeueDueRetries(db: Queryable, limit: number): Promise<number> {
  const result = await db.query(
    `WITH due AS (
       SELECT id FROM webhook_deliveries
        WHERE status = 'failed' AND next_retry_at <= now()
        ORDER BY next_retry_at
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d
        SET status = 'pending', next_retry_at = NULL
       FROM due
      WHERE d.id = due.id
        AND d.status = 'failed'
        AND d.next_retry_at <= now()`,
    [limit],
  );
  return result.rowCount ?? 0;
}
