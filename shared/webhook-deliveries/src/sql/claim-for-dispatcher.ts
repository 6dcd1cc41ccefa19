import type { Queryable } from '@brokkr/db';
import { INTERRUPTED_LEASE_EXPIRED } from '../interrupted.ts';
import { dispatcherLeaseSql } from '../lease.ts';

export interface ClaimedDelivery {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  /**
   * `acquired`: ours to send. `dead`: settled by the claim itself, nothing to send: its attempts
   * (an interrupted one included) had reached max_retries.
   */
  status: 'acquired' | 'dead';
  /** Attempts recorded before this one, including one interrupted by a crash (counted at reclaim). */
  attempts: number;
  last_error: string | null;
  /**
   * The claim's fencing token: acquired_until as Postgres prints it (microseconds intact). Every
   * later write to the row requires it unchanged, so a claim that expired and was taken over by
   * another replica can no longer be overwritten by us. Null for a row the claim settled dead.
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
  /** `BROKKR__BROKER__WEBHOOK_LEASE_SECONDS`: the lease's floor (see lease.ts). */
  leaseFloorSeconds: number;
  /** How many rows each subscription may get, where this replica knows (its endpoint's free slots; 0 = skip it). */
  roomBySubscription: ReadonlyMap<string, number>;
  /** Rows per subscription this replica knows nothing about yet. */
  defaultRoom: number;
}

// Due rows a claim reads (without locking), as a multiple of its limit.
const SCAN_FACTOR = 4;
// Candidates per subscription, as a multiple of its room: lets concurrent replicas, which read
// the same oldest rows, each lock a different share instead of all but one finding them locked.
const CANDIDATE_FACTOR = 4;

// Hub rows only (rows with target_labels belong to agents), of subscriptions with room.
const ELIGIBLE = `(w.target_labels IS NULL OR cardinality(w.target_labels) = 0)
          AND NOT EXISTS (SELECT 1 FROM room WHERE room.subscription_id = w.subscription_id AND room.n <= 0)`;

const DUE = `(w.status = 'pending'
              OR (w.status = 'failed' AND w.next_retry_at <= now())
              OR (w.status = 'acquired' AND w.acquired_until < now() AND w.acquired_by IS NULL))
         AND (w.target_labels IS NULL OR cardinality(w.target_labels) = 0)`;

/**
 * pending | failed (retry due) | acquired (lease expired) → acquired, or → dead when the budget
 * is spent; by the dispatcher.
 * Claims due hub deliveries in ONE statement (UPDATE … WHERE id IN (… FOR UPDATE SKIP LOCKED
 * LIMIT …)):
 *  - `due` reads the oldest due rows: pending; failed whose retry time passed; acquired by a
 *    dispatcher whose lease ran out (it crashed — this keeps us independent of the reaper). One
 *    branch per state, so each walks its partial index in order and stops at the limit instead
 *    of sorting the whole backlog. Subscriptions this replica has no room for are skipped.
 *  - `candidates` keeps, per enabled subscription (disabling one pauses it), a few times its room.
 *  - `locked` locks at most the subscription's room of them with FOR UPDATE SKIP LOCKED: a row
 *    another replica is claiming right now is skipped in favour of the next candidate, and one
 *    claimed and committed since `due` read it is re-checked against the WHERE and dropped.
 *    Rows are only ever claimed for an endpoint with a free slot, so none waits behind a busy
 *    receiver while its lease runs.
 *  - A row reclaimed from an expired lease had an attempt in flight when its sender died (or
 *    lost the database): that attempt is counted now (`lost`), with a last_error saying so, since
 *    nobody else ever will. A row whose attempts thereby (or by a lowered max_retries) reached the
 *    budget is settled `dead` by this statement instead of being sent again; `max_retries` is the
 *    total number of attempts, and a delivery that keeps killing its sender must end.
 * Nothing stays locked after the statement: ownership is the lease in acquired_until, which
 * covers the subscription's timeout plus the time to record the outcome (lease.ts), so no POST
 * outlives its claim. A named (prepared) statement: it runs for nearly every delivery, and
 * planning it costs more than executing it.
 */
const CLAIM_SQL = `WITH room AS (
       SELECT * FROM unnest($3::uuid[], $4::int[]) AS r(subscription_id, n)
     ), due AS (
       SELECT * FROM (
         (SELECT w.id, w.subscription_id, w.created_at FROM webhook_deliveries w
           WHERE w.status = 'pending' AND ${ELIGIBLE}
           ORDER BY w.created_at LIMIT $1 * ${SCAN_FACTOR})
         UNION ALL
         (SELECT w.id, w.subscription_id, w.created_at FROM webhook_deliveries w
           WHERE w.status = 'failed' AND w.next_retry_at <= now() AND ${ELIGIBLE}
           ORDER BY w.next_retry_at LIMIT $1 * ${SCAN_FACTOR})
         UNION ALL
         (SELECT w.id, w.subscription_id, w.created_at FROM webhook_deliveries w
           WHERE w.status = 'acquired' AND w.acquired_until < now() AND w.acquired_by IS NULL AND ${ELIGIBLE}
           ORDER BY w.acquired_until LIMIT $1 * ${SCAN_FACTOR})
       ) by_state
       ORDER BY created_at LIMIT $1 * ${SCAN_FACTOR}
     ), candidates AS (
       SELECT ranked.subscription_id, COALESCE(room.n, $5) AS room, ws.max_retries, array_agg(ranked.id) AS ids
         FROM (SELECT due.*, row_number() OVER (PARTITION BY due.subscription_id ORDER BY due.created_at) AS nth FROM due) ranked
         JOIN webhook_subscriptions ws ON ws.id = ranked.subscription_id AND ws.enabled
         LEFT JOIN room ON room.subscription_id = ranked.subscription_id
        WHERE ranked.nth <= COALESCE(room.n, $5) * ${CANDIDATE_FACTOR}
        GROUP BY ranked.subscription_id, room.n, ws.max_retries
     ), locked AS (
       SELECT l.id, l.created_at, l.lost, l.exhausted
         FROM candidates c
        CROSS JOIN LATERAL (
          SELECT w.id, w.created_at, lost.n AS lost, w.attempts + lost.n >= GREATEST(c.max_retries, 1) AS exhausted
            FROM webhook_deliveries w
           CROSS JOIN LATERAL (SELECT (w.status = 'acquired')::int AS n) lost
           WHERE w.id = ANY(c.ids) AND ${DUE}
           ORDER BY w.created_at
           LIMIT c.room
             FOR UPDATE OF w SKIP LOCKED) l
        ORDER BY l.created_at
        LIMIT $1
     )
     UPDATE webhook_deliveries d
        SET status = CASE WHEN l.exhausted THEN 'dead' ELSE 'acquired' END,
            attempts = d.attempts + l.lost,
            last_error = CASE WHEN l.lost = 1 THEN $6 ELSE d.last_error END,
            completed_at = CASE WHEN l.exhausted THEN now() ELSE d.completed_at END,
            acquired_by = NULL,
            acquired_until = CASE WHEN l.exhausted THEN NULL
                                  ELSE now() + ${dispatcherLeaseSql('$2')} END
       FROM webhook_subscriptions s, locked l
      WHERE s.id = d.subscription_id
        AND d.id = l.id
  RETURNING d.id, d.subscription_id, d.event_id, d.event_type, d.payload, d.status, d.attempts, d.last_error, d.acquired_until::text AS lease,
            s.url_encrypted, s.auth_header_encrypted, s.signing_secret_encrypted,
            CASE WHEN s.previous_signing_secret_expires_at > now() THEN s.previous_signing_secret_encrypted END
              AS previous_signing_secret_encrypted,
            s.max_retries, s.timeout_seconds`;

export async function claimForDispatcher(db: Queryable, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const known = [...options.roomBySubscription];
  const { rows } = await db.query<ClaimedDelivery>({
    name: 'webhook-claim-deliveries',
    text: CLAIM_SQL,
    values: [
      options.limit,
      options.leaseFloorSeconds,
      known.map(([id]) => id),
      known.map(([, n]) => n),
      options.defaultRoom,
      INTERRUPTED_LEASE_EXPIRED,
    ],
  });
  return rows;
}
