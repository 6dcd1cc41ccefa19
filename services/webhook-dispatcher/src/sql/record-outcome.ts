import type { PgPool } from './pg-pool.ts';

/**
 * One conditional UPDATE per outcome. The fence (status 'acquired', no agent, acquired_until
 * equal to our lease token) means a write lands only while the claim is still ours; false means
 * someone else took the row over and our result is dropped.
 */
const FENCE = `id = $1 AND status = 'acquired' AND acquired_by IS NULL AND acquired_until = $2::timestamptz`;

export interface Claim {
  id: string;
  lease: string;
}

export async function markSuccess(db: PgPool, claim: Claim): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'webhook-mark-success',
    text: `UPDATE webhook_deliveries
        SET status = 'success', attempts = attempts + 1, last_attempt_at = now(), completed_at = now(),
            last_error = NULL, next_retry_at = NULL, acquired_until = NULL
      WHERE ${FENCE}`,
    values: [claim.id, claim.lease],
  });
  return rowCount === 1;
}

export async function markFailed(db: PgPool, claim: Claim, retry: { delaySeconds: number; error: string }): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'webhook-mark-failed',
    text: `UPDATE webhook_deliveries
        SET status = 'failed', attempts = attempts + 1, last_attempt_at = now(),
            next_retry_at = now() + make_interval(secs => $3::double precision), last_error = $4,
            acquired_until = NULL
      WHERE ${FENCE}`,
    values: [claim.id, claim.lease, retry.delaySeconds, retry.error],
  });
  return rowCount === 1;
}

export async function markDead(db: PgPool, claim: Claim, error: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'webhook-mark-dead',
    text: `UPDATE webhook_deliveries
        SET status = 'dead', attempts = attempts + 1, last_attempt_at = now(), completed_at = now(),
            last_error = $3, next_retry_at = NULL, acquired_until = NULL
      WHERE ${FENCE}`,
    values: [claim.id, claim.lease, error],
  });
  return rowCount === 1;
}

const STOPPED_MID_ATTEMPT = 'Request interrupted: the dispatcher stopped before the receiver answered';

/**
 * Hands claimed rows back, so any replica can take them at once instead of after the lease:
 * rows over this replica's per-endpoint limit untouched (never sent), and POSTs cut short by
 * shutdown with the attempt counted (`attempted`: the receiver may well have got it).
 */
export async function releaseClaims(db: PgPool, claims: readonly Claim[], options: { attempted?: boolean } = {}): Promise<number> {
  if (claims.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries d
        SET status = 'pending', acquired_until = NULL, next_retry_at = NULL,
            attempts = d.attempts + CASE WHEN $3::boolean THEN 1 ELSE 0 END,
            last_attempt_at = CASE WHEN $3::boolean THEN now() ELSE d.last_attempt_at END,
            last_error = CASE WHEN $3::boolean THEN $4::text ELSE d.last_error END
       FROM unnest($1::uuid[], $2::timestamptz[]) AS r(id, lease)
      WHERE d.id = r.id AND d.status = 'acquired' AND d.acquired_by IS NULL AND d.acquired_until = r.lease`,
    [claims.map((c) => c.id), claims.map((c) => c.lease), options.attempted ?? false, STOPPED_MID_ATTEMPT],
  );
  return rowCount ?? 0;
}
