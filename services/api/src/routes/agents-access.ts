import { isAdminOrAgent } from '../auth/guards.ts';
import type { Identity } from '../auth/identity.ts';
import { errorKind, raising } from '../http/api-error.ts';

export const agentPakMismatch = errorKind(403, 'agent_pak_mismatch', 'PAK does not match the agent');

/** Brokkr's "A, Ag(self)" rule: anyone else (other agents, generators) gets 403 `agent_pak_mismatch`. */
export const requireAdminOrSelf = raising((identity: Identity, agentId: string): void => {
  // Path UUIDs may arrive in upper case; the identity's id is Postgres's lower-case form.
  if (!isAdminOrAgent(identity, agentId.toLowerCase())) throw agentPakMismatch();
}, agentPakMismatch);

/** "Ag(self) only" (the heartbeat): an admin is refused too. */
export const requireSelf = raising((identity: Identity, agentId: string): void => {
  if (identity.agent !== agentId.toLowerCase()) throw agentPakMismatch.with('Only the agent itself may call this');
}, agentPakMismatch);

export const agentNotFound = errorKind(404, 'agent_not_found', 'Agent not found');
export const invalidAgent = errorKind(400, 'invalid_agent', 'name and cluster_name must not be blank');

/** Brokkr applies only string values of the fields it knows; anything else counts as absent. */
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
