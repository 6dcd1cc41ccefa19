import { isAdminOrAgent } from '../auth/guards.ts';
import type { Identity } from '../auth/identity.ts';
import { errorKind, raising } from '../errors/api-error.ts';
import { agentPakMismatch } from '../errors/catalogue.ts';

/** Who may act for an agent: the rules every resource under /agents/{id}/… applies. */

const agentIdMismatch = errorKind(400, 'agent_id_mismatch', 'agent_id in the body does not match the path');

/** Brokkr's "A, Ag(self)" rule: anyone else (other agents, generators) gets 403 `agent_pak_mismatch`. */
export const requireAdminOrSelf = raising((identity: Identity, agentId: string): void => {
  // Path UUIDs may arrive in upper case; the identity's id is Postgres's lower-case form.
  if (!isAdminOrAgent(identity, agentId.toLowerCase())) throw agentPakMismatch();
}, agentPakMismatch);

/** "Ag(self) only" (the heartbeat): an admin is refused too. */
export const requireSelf = raising((identity: Identity, agentId: string): void => {
  if (identity.agent !== agentId.toLowerCase()) throw agentPakMismatch.with('Only the agent itself may call this');
}, agentPakMismatch);

/** A body naming an agent must name the one in the path. */
export const requireSameAgent = raising((pathId: string, bodyId: string): void => {
  if (pathId !== bodyId) throw agentIdMismatch({ path: pathId, body: bodyId });
}, agentIdMismatch);
