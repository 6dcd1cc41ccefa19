import type { Queryable } from '@brokkr/db';

export interface AgentClaimedDelivery {
  id: string;
  subscription_id: string;
  event_type: string;
  event_id: string;
  payload: string;
  /**
   * `acquired`: hand it to the agent. `dead`: settled by the claim, not handed out: its attempts
   * (one interrupted by an expired lease included) had reached max_retries.
   */
  status: 'acquired' | 'dead';
  /** Attempts before this one, including one whose lease expired without a report (counted at reclaim). */
  attempts: number;
  last_error: string | null;
  url_encrypted: Buffer;
  auth_header_encrypted: Buffer | null;
  timeout_seconds: number;
  max_retries: number;
}

export const AGENT_LEASE_SECONDS = 60;

/** last_error of an attempt whose agent never reported before its lease expired. */
const INTERRUPTED = 'Request interrupted: the lease expired before the agent reported an outcome';

/**
 * Claims up to `limit` agent deliveries in ONE statement (SKIP LOCKED + a lease of 60 s, or the
 * subscription's timeout plus 30 s when that is longer, so a slow POST is not re-offered to another
 * agent while it is still running): rows whose
 * target_labels are all carried by the agent (AND; `<@` is "contained in"), oldest first. Two
 * agents polling at once never get the same row. Due retries and claims whose lease ran out are
 * claimable too, so the flow does not depend on the maintenance reaper. Paused (disabled)
 * subscriptions are skipped, as in the dispatcher.
 * A row taken over from an expired lease had an attempt in flight whose outcome was never
 * reported: it is counted now (`lost`), with a last_error saying so. A row whose attempts thereby
 * (or by a lowered max_retries) reached the budget is settled `dead` here, keeping the agent that
 * last held it, instead of being handed out again.
 */
export async function claimForAgent(db: Queryable, agentId: string, limit: number): Promise<AgentClaimedDelivery[]> {
  const { rows } = await db.query<AgentClaimedDelivery>(
    `WITH locked AS (
       SELECT w.id, lost.n AS lost, w.attempts + lost.n >= greatest(ws.max_retries, 1) AS exhausted
         FROM webhook_deliveries w
         JOIN webhook_subscriptions ws ON ws.id = w.subscription_id AND ws.enabled
        CROSS JOIN LATERAL (SELECT (w.status = 'acquired')::int AS n) lost
        WHERE (w.status = 'pending'
               OR (w.status = 'failed' AND w.next_retry_at <= now())
               OR (w.status = 'acquired' AND w.acquired_until < now()))
          AND cardinality(w.target_labels) > 0
          AND w.target_labels <@ ARRAY(SELECT label::text FROM agent_labels WHERE agent_id = $1)
        ORDER BY w.created_at
        LIMIT $2
          FOR UPDATE OF w SKIP LOCKED
     )
     UPDATE webhook_deliveries d
        SET status = CASE WHEN l.exhausted THEN 'dead' ELSE 'acquired' END,
            acquired_by = CASE WHEN l.exhausted THEN d.acquired_by ELSE $1 END,
            acquired_until = CASE WHEN l.exhausted THEN NULL
                                  ELSE now() + make_interval(secs => greatest($3::int, s.timeout_seconds + 30)) END,
            attempts = d.attempts + l.lost,
            last_error = CASE WHEN l.lost = 1 THEN $4 ELSE d.last_error END,
            completed_at = CASE WHEN l.exhausted THEN now() ELSE d.completed_at END
       FROM webhook_subscriptions s, locked l
      WHERE s.id = d.subscription_id
        AND d.id = l.id
  RETURNING d.id, d.subscription_id, d.event_type, d.event_id, d.payload, d.status, d.attempts, d.last_error,
            s.url_encrypted, s.auth_header_encrypted, s.timeout_seconds, s.max_retries`,
    [agentId, limit, AGENT_LEASE_SECONDS, INTERRUPTED],
  );
  return rows;
}

export interface RecordedResult {
  status: 'success' | 'failed' | 'dead';
  attempts: number;
  next_retry_at: Date | null;
  subscription_id: string;
  event_id: string;
  event_type: string;
}

const FENCE = `id = $1 AND acquired_by = $2 AND status = 'acquired'`;
const RETURNING = `RETURNING status, attempts, next_retry_at, subscription_id, event_id, event_type`;

export async function agentMarkSuccess(db: Queryable, id: string, agentId: string): Promise<RecordedResult | undefined> {
  const { rows } = await db.query<RecordedResult>(
    `UPDATE webhook_deliveries
        SET status = 'success', attempts = attempts + 1, last_attempt_at = now(), completed_at = now(),
            last_error = NULL, next_retry_at = NULL, acquired_until = NULL
      WHERE ${FENCE} ${RETURNING}`,
    [id, agentId],
  );
  return rows[0];
}

/**
 * Brokkr's mark_failed: the n-th failed attempt retries after 2^n seconds, unless n reached
 * max_retries (the total-attempt cap), which makes it dead. `terminal` (a non-retryable status)
 * is dead at once.
 */
export async function agentMarkFailure(
  db: Queryable,
  claim: { id: string; agentId: string },
  failure: { error: string; maxRetries: number; terminal: boolean },
): Promise<RecordedResult | undefined> {
  const { rows } = await db.query<RecordedResult>(
    `WITH decided AS (
       SELECT id, ($5::boolean OR attempts + 1 >= $4::int) AS dead FROM webhook_deliveries WHERE ${FENCE}
     )
     UPDATE webhook_deliveries d
        SET status = CASE WHEN decided.dead THEN 'dead' ELSE 'failed' END,
            attempts = d.attempts + 1,
            last_attempt_at = now(),
            completed_at = CASE WHEN decided.dead THEN now() END,
            next_retry_at = CASE WHEN decided.dead THEN NULL ELSE now() + make_interval(secs => power(2, d.attempts + 1)) END,
            acquired_by = CASE WHEN decided.dead THEN d.acquired_by END,
            acquired_until = NULL,
            last_error = $3
       FROM decided
      WHERE d.id = decided.id AND d.status = 'acquired' AND d.acquired_by = $2
  RETURNING d.status, d.attempts, d.next_retry_at, d.subscription_id, d.event_id, d.event_type`,
    [claim.id, claim.agentId, failure.error, failure.maxRetries, failure.terminal],
  );
  return rows[0];
}

/** A claimed row that cannot be handed out (its URL does not decrypt): dead at once. */
export async function agentMarkDead(db: Queryable, id: string, agentId: string, error: string): Promise<RecordedResult | undefined> {
  const { rows } = await db.query<RecordedResult>(
    `UPDATE webhook_deliveries
        SET status = 'dead', attempts = attempts + 1, completed_at = now(), last_error = $3, acquired_until = NULL
      WHERE ${FENCE} ${RETURNING}`,
    [id, agentId, error],
  );
  return rows[0];
}
