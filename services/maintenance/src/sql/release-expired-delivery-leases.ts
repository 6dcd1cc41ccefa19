import type { TaskClient } from './queryable.ts';

/** last_error of the attempt that was in flight when its sender died. */
const INTERRUPTED = 'Request interrupted: the lease expired before the outcome was recorded (the sender stopped or lost the database)';

/**
 * Returns deliveries whose lease ran out (`acquired`, acquired_until in the past: a dispatcher
 * replica or an agent died mid-delivery) to `pending`, clearing the lease. The attempt that was
 * in flight is counted (attempts + 1, last_error says it was interrupted): nobody else will
 * record it, and a delivery must not get more attempts than max_retries by crashing its sender.
 * The next claim settles a row whose budget is thereby spent as `dead` instead of sending it.
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
        SET status = 'pending', acquired_by = NULL, acquired_until = NULL,
            attempts = d.attempts + 1, last_error = $2
       FROM expired
      WHERE d.id = expired.id
        AND d.status = 'acquired'
        AND d.acquired_until < now()`,
    [limit, INTERRUPTED],
  );
  return result.rowCount ?? 0;
}
