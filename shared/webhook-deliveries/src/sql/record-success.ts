import type { Queryable } from '@brokkr/db';
import { AGENT_FENCE, LEASE_FENCE, type AgentClaim, type LeaseClaim } from './fences.ts';

/**
 * acquired → success (Brokkr's mark_success): the receiver answered 2xx. One UPDATE fenced on the
 * claim (fences.ts): false / undefined means the claim was no longer the writer's and nothing was
 * written.
 */
const SET_SUCCESS = `status = 'success', attempts = attempts + 1, last_attempt_at = now(), completed_at = now(),
            last_error = NULL, next_retry_at = NULL, acquired_until = NULL`;

/** By the dispatcher. */
export async function recordSuccess(db: Queryable, claim: LeaseClaim): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'webhook-mark-success',
    text: `UPDATE webhook_deliveries SET ${SET_SUCCESS} WHERE ${LEASE_FENCE}`,
    values: [claim.id, claim.lease],
  });
  return rowCount === 1;
}

/** What an agent's report turned the delivery into. */
export interface RecordedResult {
  status: 'success' | 'failed' | 'dead';
  attempts: number;
  next_retry_at: Date | null;
  subscription_id: string;
  event_id: string;
  event_type: string;
}

export const RECORDED_RESULT = `RETURNING status, attempts, next_retry_at, subscription_id, event_id, event_type`;

/** By an agent's report (`POST /webhook-deliveries/{id}/result`). acquired_by stays: a repeated report finds its outcome. */
export async function recordAgentSuccess(db: Queryable, claim: AgentClaim): Promise<RecordedResult | undefined> {
  const { rows } = await db.query<RecordedResult>(`UPDATE webhook_deliveries SET ${SET_SUCCESS} WHERE ${AGENT_FENCE} ${RECORDED_RESULT}`, [
    claim.id,
    claim.agentId,
    claim.attempts,
  ]);
  return rows[0];
}
