import type { Queryable } from '@brokkr/db';
import { INTERRUPTED_LEASE_EXPIRED } from '../interrupted.ts';

/**
 * acquired (lease expired) → pending, by the maintenance reaper.
 * Returns deliveries whose lease ran out (a dispatcher replica or an agent died mid-delivery) to
 * `pending`, clearing the lease. The attempt that was in flight is counted (attempts + 1,
 * last_error says it was interrupted): nobody else will record it, and a delivery must not get
 * more attempts than max_retries by crashing its sender. The next claim settles a row whose
 * budget is thereby spent as `dead` instead of sending it.
 * The CTE takes row locks with SKIP LOCKED, so a row a dispatcher or agent is settling right now
 * (its outcome UPDATE holds the row) is left for the next tick instead of being reset under it;
 * the outer WHERE re-checks the state, so the statement is idempotent. The claims take expired
 * leases back themselves too: this only makes a dead holder's rows visible sooner.
 */
export async function releaseExpiredLeases(db: Queryable, limit: number): Promise<number> {
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
    [limit, INTERRUPTED_LEASE_EXPIRED],
  );
  return result.rowCount ?? 0;
}
