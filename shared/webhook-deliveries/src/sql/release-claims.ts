import type { Queryable } from '@brokkr/db';
import { INTERRUPTED_BY_SHUTDOWN } from '../interrupted.ts';
import type { LeaseClaim } from './fences.ts';

/**
 * acquired → pending, by the dispatcher that holds the claims, so any replica can take them at
 * once instead of after the lease: rows over this replica's per-endpoint limit untouched (never
 * sent), and POSTs cut short by shutdown with the attempt counted (`attempted`: the receiver may
 * well have got it). Fenced per row on its lease token, like every write after a claim: a claim
 * taken over meanwhile is left alone.
 */
export async function releaseClaims(db: Queryable, claims: readonly LeaseClaim[], options: { attempted?: boolean } = {}): Promise<number> {
  if (claims.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries d
        SET status = 'pending', acquired_until = NULL, next_retry_at = NULL,
            attempts = d.attempts + CASE WHEN $3::boolean THEN 1 ELSE 0 END,
            last_attempt_at = CASE WHEN $3::boolean THEN now() ELSE d.last_attempt_at END,
            last_error = CASE WHEN $3::boolean THEN $4::text ELSE d.last_error END
       FROM unnest($1::uuid[], $2::timestamptz[]) AS r(id, lease)
      WHERE d.id = r.id AND d.status = 'acquired' AND d.acquired_by IS NULL AND d.acquired_until = r.lease`,
    [claims.map((c) => c.id), claims.map((c) => c.lease), options.attempted ?? false, INTERRUPTED_BY_SHUTDOWN],
  );
  return rowCount ?? 0;
}
