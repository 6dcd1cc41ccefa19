/**
 * Every write after a claim is one conditional UPDATE fenced on the claim, so it lands only while
 * the claim is still its writer's: a holder whose lease expired and was taken over (by anyone)
 * writes nothing, and learns so from the empty result. No lock outlives its statement.
 */

/** A dispatcher's claim: its lease token is acquired_until as Postgres printed it at claim time. */
export interface LeaseClaim {
  id: string;
  /** acquired_until::text (microseconds intact); no two claims of a row share it. */
  lease: string;
}

/** An agent's claim, as the api knows it when the agent reports. */
export interface AgentClaim {
  id: string;
  agentId: string;
  /**
   * Attempts recorded when the outcome was decided. Every claim that takes back an expired lease
   * counts one, so (agent, attempts) tells this claim from a later one of the same agent, and a
   * decision computed from a stale count (the retry number, the budget) is never written.
   */
  attempts: number;
}

/** $1 = id, $2 = lease. Hub rows have no acquired_by. */
export const LEASE_FENCE = `id = $1 AND status = 'acquired' AND acquired_by IS NULL AND acquired_until = $2::timestamptz`;

/** $1 = id, $2 = agent, $3 = attempts. */
export const AGENT_FENCE = `id = $1 AND status = 'acquired' AND acquired_by = $2 AND attempts = $3`;
