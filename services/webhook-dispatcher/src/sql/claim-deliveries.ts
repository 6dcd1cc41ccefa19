import type { Queryable } from '@brokkr/db';

export interface ClaimedDelivery {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  /** Attempts recorded before this one. */
  attempts: number;
  /**
   * The claim's fencing token: acquired_until as Postgres prints it (microseconds intact). Every
   * later write to the row requires it unchanged, so a claim that expired and was taken over by
   * another replica can no longer be overwritten by us.
   */
  lease: string;
  url_encrypted: Buffer;
  auth_header_encrypted: Buffer | null;
  signing_secret_encrypted: Buffer | null;
  /** Only while the rotation grace period runs. */
  previous_signing_secret_encrypted: Buffer | null;
  max_retries: number;
  timeout_seconds: number;
}

export interface ClaimOptions {
  limit: number;
  leaseSeconds: number;
  /** Subscriptions whose endpoint is saturated in this replica: leave their rows to others. */
  excludeSubscriptions: readonly string[];
}

/**
 * Claims due hub deliveries in ONE statement. The inner SELECT … FOR UPDATE SKIP LOCKED lets
 * replicas claim concurrently without waiting on or double-taking each other's rows (a row locked
 * by another claimer is skipped; one committed meanwhile is re-checked against the WHERE by
 * Postgres before we lock it). Nothing stays locked after the statement: ownership is the lease
 * in acquired_until. Due means: pending; failed with next_retry_at passed; or acquired by a
 * dispatcher whose lease ran out (it crashed), which also makes us independent of the reaper.
 * Rows with target_labels belong to agents, and a disabled subscription's rows wait (a pause).
 * The lease covers the subscription's timeout plus 10 s for recording the outcome, so no POST
 * outlives its claim.
 */
export async function claimDeliveries(db: Queryable, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(
    `UPDATE webhook_deliveries d
        SET status = 'acquired',
            acquired_by = NULL,
            acquired_until = now() + make_interval(secs => GREATEST($2::int, s.timeout_seconds + 10))
       FROM webhook_subscriptions s
      WHERE s.id = d.subscription_id
        AND d.id IN (
          SELECT w.id
            FROM webhook_deliveries w
            JOIN webhook_subscriptions ws ON ws.id = w.subscription_id AND ws.enabled
           WHERE (w.status = 'pending'
                  OR (w.status = 'failed' AND w.next_retry_at <= now())
                  OR (w.status = 'acquired' AND w.acquired_until < now() AND w.acquired_by IS NULL))
             AND (w.target_labels IS NULL OR cardinality(w.target_labels) = 0)
             AND w.subscription_id <> ALL($3::uuid[])
           ORDER BY w.created_at
           LIMIT $1
             FOR UPDATE OF w SKIP LOCKED)
  RETURNING d.id, d.subscription_id, d.event_id, d.event_type, d.payload, d.attempts, d.acquired_until::text AS lease,
            s.url_encrypted, s.auth_header_encrypted, s.signing_secret_encrypted,
            CASE WHEN s.previous_signing_secret_expires_at > now() THEN s.previous_signing_secret_encrypted END
              AS previous_signing_secret_encrypted,
            s.max_retries, s.timeout_seconds`,
    [options.limit, options.leaseSeconds, options.excludeSubscriptions],
  );
  return rows;
}
