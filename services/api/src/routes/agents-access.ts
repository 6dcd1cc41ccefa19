import { isAdminOrAgent } from '../auth/guards.ts';
import type { Identity } from '../auth/identity.ts';
import { forbidden, notFound } from '../http/api-error.ts';

/** Brokkr's "A, Ag(self)" rule: anyone else (other agents, generators) gets 403 `agent_pak_mismatch`. */
export function requireAdminOrSelf(identity: Identity, agentId: string): void {
  // Path UUIDs may arrive in upper case; the identity's id is Postgres's lower-case form.
  if (!isAdminOrAgent(identity, agentId.toLowerCase())) throw forbidden('agent_pak_mismatch', 'PAK does not match the agent');
}

/** "Ag(self) only" (the heartbeat): an admin is refused too. */
export function requireSelf(identity: Identity, agentId: string): void {
  if (identity.agent !== agentId.toLowerCase()) throw forbidden('agent_pak_mismatch', 'Only the agent itself may call this');
}

export const agentNotFound = () => notFound('agent_not_found', 'Agent not found');

/** Brokkr applies only string values of the fields it knows; anything else counts as absent. */
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
