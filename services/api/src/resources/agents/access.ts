import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { generatorNotFound, generatorRequired, stackNotFound, systemGeneratorNotATenant } from '../../errors/catalogue.ts';
import type { AgentRow } from '../../domain/agent-row.ts';
import { findGenerator, listAgents, listAgentsOfGenerator, stackForTargeting } from './sql/queries.ts';

const targetGeneratorMismatch = errorKind(403, 'target_generator_mismatch', 'The stack belongs to another generator');
const targetCreateDenied = errorKind(403, 'target_create_denied', 'Agents cannot manage targets');
const agentNotRegistered = errorKind(403, 'agent_not_registered', "The agent is not registered with the stack's generator");

/**
 * Brokkr's check chain for creating AND removing an explicit target, in its exact order:
 * 404 stack_not_found → 403 target_generator_mismatch (a generator that does not own the stack)
 * → 403 target_create_denied (agents never target) → 403 agent_not_registered (no consent from the
 * agent for the stack's generator; an admin cannot bypass it).
 */
export const authorizeTargeting = raising(
  async (db: Queryable, identity: Identity, agentId: string, stackId: string): Promise<void> => {
    const stack = await stackForTargeting(db, stackId, agentId);
    if (!stack) throw stackNotFound();
    if (identity.generator && identity.generator !== stack.generator_id) throw targetGeneratorMismatch();
    if (identity.agent) throw targetCreateDenied();
    if (!stack.registered) throw agentNotRegistered({ agent_id: agentId, generator_id: stack.generator_id });
  },
  stackNotFound,
  targetGeneratorMismatch,
  targetCreateDenied,
  agentNotRegistered,
);

/** Admin: every live agent. Generator: its tenants (the agents registered with it). Agents: refused. */
export const visibleAgents = raising(
  async (ctx: ApiContext, identity: Identity): Promise<AgentRow[]> => {
    if (identity.admin) return listAgents(ctx.db.pool);
    if (!identity.generator) throw generatorRequired.with('Only an admin or a generator may list agents');
    const generator = await findGenerator(ctx.db.pool, identity.generator);
    if (!generator) throw generatorNotFound();
    if (generator.is_system) throw systemGeneratorNotATenant();
    return listAgentsOfGenerator(ctx.db.pool, identity.generator);
  },
  generatorRequired,
  generatorNotFound,
  systemGeneratorNotATenant,
);
