import type { ActorType } from '@brokkr/contracts';

/** Who is calling: exactly one of admin / agent / generator is set (Brokkr's AuthPayload). */
export interface Identity {
  admin: boolean;
  agent: string | null;
  generator: string | null;
  /** Brokkr's read-only UI PAK is not implemented; always false. */
  readonly: false;
}

export const adminIdentity = (): Identity => ({ admin: true, agent: null, generator: null, readonly: false });
export const agentIdentity = (id: string): Identity => ({ admin: false, agent: id, generator: null, readonly: false });
export const generatorIdentity = (id: string): Identity => ({ admin: false, agent: null, generator: id, readonly: false });

/** The audit actor for an identity: admins have no id, agents and generators their own. */
export function actorOf(identity: Identity): { actor_type: ActorType; actor_id: string | null } {
  if (identity.admin) return { actor_type: 'admin', actor_id: null };
  if (identity.agent) return { actor_type: 'agent', actor_id: identity.agent };
  if (identity.generator) return { actor_type: 'generator', actor_id: identity.generator };
  return { actor_type: 'system', actor_id: null };
}

/**
 * Whose share a job takes in the queues that are fair between tenants (the template renderer, the
 * YAML validator): each generator is a tenant, each agent, and the admin is one of its own.
 */
export function tenantOf(identity: Identity): string {
  if (identity.generator) return `generator:${identity.generator}`;
  if (identity.agent) return `agent:${identity.agent}`;
  return 'admin';
}
