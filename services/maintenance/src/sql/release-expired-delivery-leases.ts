import type { TaskClient } from './queryable.ts';

/**
 * Returns deliveries whose lease ran out (`acquired`, acquired_until in the past: a dispatcher
 * replica or an agent died mid-delivery) to `pending`, clearing the lease.
 * The CTE takes row locks with SKIP LOCKED, so a row a dispatcher is settling right now (its
 * success/failure UPDATE holds the row) is left for the next tick instead of being reset under
 * it; the outer WHERE re-checks the state, so the statement is idempotent.
 */
export async function releaseExpiredDeliveryLeases(db: TaskClient, limit: number): Promise<number> {
  const result = await db.query(
    `WITH expired AS (
       SELECT id FROM webhook_deliveries
        WHERE status = 'acquired' AND acquired_until < now()
        ORDER BY acquired_until
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d
        SET status = 'pending', acquired_by = NULL, acquired_until = NULL
       FROM expired
      WHERE d.id = expired.id
        AND d.status = 'acquired'
        AND d.acquired_until < now()`,
    [limit],
  );
  return result.rowCount ?? 0;
}
