/**
 * Why an agent refused to act on something the hub sent. The first four are what a compromised
 * hub, database or key can cause; `trust_metadata_stale` is a hub that stopped relaying fresh
 * metadata (a freeze): nothing new is taken until it does.
 */
export type RefusalReason =
  | 'signature_invalid'
  | 'target_not_authorized'
  | 'rollback_rejected'
  | 'key_revoked'
  | 'trust_metadata_stale'
  /** A chart or an overlay whose render for this agent is more than its signed inputs (override layers, agent references). */
  | 'render_not_signable'
  /** Signed inputs the agent's own renderer could not render. */
  | 'render_failed';

export interface Refusal {
  reason: RefusalReason;
  /** Says what was wrong, for the agent event (prefixed with the reason there). */
  detail: string;
}

export const refuse = (reason: RefusalReason, detail: string): Refusal => ({ reason, detail });

/** `reason: detail`: the message of the refusal event, so a reader and a test match on the reason. */
export const refusalMessage = (r: Refusal): string => `${r.reason}: ${r.detail}`;
