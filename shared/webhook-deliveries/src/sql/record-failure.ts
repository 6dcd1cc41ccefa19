import type { Queryable } from '@brokkr/db';
import type { AfterFailure } from '../retry-policy.ts';
import { AGENT_FENCE, LEASE_FENCE, type AgentClaim, type LeaseClaim } from './fences.ts';
import { RECORDED_RESULT, type RecordedResult } from './record-success.ts';

/**
 * acquired → failed (retry scheduled at next_retry_at) or → dead (Brokkr's mark_failed and
 * mark_dead). What follows a failure is decided in TypeScript by the one retry policy
 * (retry-policy.ts) from the attempts the claim knew; the UPDATE is fenced on that claim
 * (fences.ts), so a decision is written only onto the state it was computed from. An empty
 * result means the claim was no longer the writer's and nothing was written.
 */

/** By the dispatcher: a retryable failure within the budget. */
export async function recordRetry(db: Queryable, claim: LeaseClaim, retry: { delaySeconds: number; error: string }): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'webhook-mark-failed',
    text: `UPDATE webhook_deliveries
        SET status = 'failed', attempts = attempts + 1, last_attempt_at = now(),
            next_retry_at = now() + make_interval(secs => $3::double precision), last_error = $4,
            acquired_until = NULL
      WHERE ${LEASE_FENCE}`,
    values: [claim.id, claim.lease, retry.delaySeconds, retry.error],
  });
  return rowCount === 1;
}

/** By the dispatcher: a final failure, the budget spent, or a delivery that cannot be sent (decrypt, invalid URL). */
export async function recordDead(db: Queryable, claim: LeaseClaim, error: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'webhook-mark-dead',
    text: `UPDATE webhook_deliveries
        SET status = 'dead', attempts = attempts + 1, last_attempt_at = now(), completed_at = now(),
            last_error = $3, next_retry_at = NULL, acquired_until = NULL
      WHERE ${LEASE_FENCE}`,
    values: [claim.id, claim.lease, error],
  });
  return rowCount === 1;
}

/**
 * By an agent's failed report. A retry frees the row (acquired_by NULL) for any agent once due;
 * a dead row keeps the agent, so a repeated report finds its outcome.
 */
export async function recordAgentFailure(
  db: Queryable,
  claim: AgentClaim,
  outcome: AfterFailure & { error: string },
): Promise<RecordedResult | undefined> {
  const dead = outcome.kind === 'dead';
  const { rows } = await db.query<RecordedResult>(
    `UPDATE webhook_deliveries
        SET status = CASE WHEN $4::boolean THEN 'dead' ELSE 'failed' END,
            attempts = attempts + 1,
            last_attempt_at = now(),
            completed_at = CASE WHEN $4::boolean THEN now() END,
            next_retry_at = CASE WHEN $4::boolean THEN NULL ELSE now() + make_interval(secs => $5::double precision) END,
            acquired_by = CASE WHEN $4::boolean THEN acquired_by END,
            acquired_until = NULL,
            last_error = $6
      WHERE ${AGENT_FENCE} ${RECORDED_RESULT}`,
    [claim.id, claim.agentId, claim.attempts, dead, outcome.kind === 'retry' ? outcome.delaySeconds : 0, outcome.error],
  );
  return rows[0];
}

/**
 * By the api while handing out an agent's claim: a claimed row that cannot be handed out (a
 * secret does not decrypt, an auth header no client can send) is dead at once, nothing sent.
 */
export async function recordAgentUndeliverable(db: Queryable, claim: AgentClaim, error: string): Promise<RecordedResult | undefined> {
  const { rows } = await db.query<RecordedResult>(
    `UPDATE webhook_deliveries
        SET status = 'dead', attempts = attempts + 1, completed_at = now(), last_error = $4, acquired_until = NULL
      WHERE ${AGENT_FENCE} ${RECORDED_RESULT}`,
    [claim.id, claim.agentId, claim.attempts, error],
  );
  return rows[0];
}
