import type { Queryable } from '@brokkr/db';
import { INTERRUPTED_AGENT_SILENT } from '../interrupted.ts';
import { AGENT_LEASE_SQL } from '../lease.ts';

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

/**
 * pending | failed (retry due) | acquired (lease expired) → acquired by the agent, or → dead
 * when the budget is spent; by an agent through `GET /agents/{id}/webhooks/pending`.
 * Claims up to `limit` agent deliveries in ONE statement (SKIP LOCKED + a lease covering the
 * agent's start window, the POST and its report: lease.ts): rows whose target_labels are all
 * carried by the agent (AND; `<@` is "contained in"), oldest first. FOR UPDATE SKIP LOCKED: two
 * agents polling at once never get the same row, a row another statement is writing right now (a
 * report, the reaper) is skipped rather than waited for, and one changed since this statement's
 * snapshot is re-checked against the WHERE before it is locked. The UPDATE then writes rows this
 * statement holds locked. Due retries and claims whose lease ran out are claimable too, so the
 * flow does not depend on the maintenance reaper. Paused (disabled) subscriptions are skipped, as
 * in the dispatcher.
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
            acquired_until = CASE WHEN l.exhausted THEN NULL ELSE now() + ${AGENT_LEASE_SQL} END,
            attempts = d.attempts + l.lost,
            last_error = CASE WHEN l.lost = 1 THEN $3 ELSE d.last_error END,
            completed_at = CASE WHEN l.exhausted THEN now() ELSE d.completed_at END
       FROM webhook_subscriptions s, locked l
      WHERE s.id = d.subscription_id
        AND d.id = l.id
  RETURNING d.id, d.subscription_id, d.event_type, d.event_id, d.payload, d.status, d.attempts, d.last_error,
            s.url_encrypted, s.auth_header_encrypted, s.timeout_seconds, s.max_retries`,
    [agentId, limit, INTERRUPTED_AGENT_SILENT],
  );
  return rows;
}
