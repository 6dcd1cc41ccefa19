import { createHash } from 'node:crypto';
import type { AgentGrants } from '@brokkr/contracts';

/**
 * A short digest of an agent's grants, over their JSON as the hub serves it: the hub sends it with
 * the target state (`Brokkr-Grants`, also folded into the answer's ETag), and the agent computes
 * it over the grants it fetched, so it knows whether it holds the grants the state was read with.
 */
export function grantsDigest(grants: AgentGrants): string {
  return createHash('sha256').update(JSON.stringify(grants)).digest('base64url').slice(0, 22);
}
