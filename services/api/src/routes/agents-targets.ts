import type { Queryable } from '@brokkr/db';
import type { Identity } from '../auth/identity.ts';
import { errorKind, raising } from '../http/api-error.ts';
import { uniqueViolation } from '../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { requireAdminOrSelf } from './agents-access.ts';
import { requireSameAgent } from './agents-metadata.ts';
import { deleteTarget, insertTarget, listTargets, stackForTargeting } from './agents-metadata-sql.ts';
import { agentTargetParams, agentTargetSchema, newAgentTargetSchema } from './agents-schemas.ts';
import { stackNotFound } from '../resources/stacks/access.ts';

const tags = ['agents'];
const targetGeneratorMismatch = errorKind(403, 'target_generator_mismatch', 'The stack belongs to another generator');
const targetCreateDenied = errorKind(403, 'target_create_denied', 'Agents cannot manage targets');
const agentNotRegistered = errorKind(403, 'agent_not_registered', "The agent is not registered with the stack's generator");
const targetNotFound = errorKind(404, 'agent_target_not_found', 'Agent target not found');

/**
 * Brokkr's check chain for creating AND removing an explicit target, in its exact order:
 * 404 stack_not_found → 403 target_generator_mismatch (a generator that does not own the stack)
 * → 403 target_create_denied (agents never target) → 403 agent_not_registered (no consent from the
 * agent for the stack's generator; an admin cannot bypass it).
 */
const authorizeTargeting = raising(
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

export const agentTargetRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/targets',
    summary: "List an agent's explicit stack targets",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Targets', schema: agentTargetSchema.array() } },
    errors: [requireAdminOrSelf],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      return json(200, await listTargets(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/targets',
    summary: 'Target a stack at an agent (admin or the stack-owning generator)',
    tags,
    access: 'any',
    params: idParams,
    body: newAgentTargetSchema,
    responses: { 201: { description: 'The target', schema: agentTargetSchema } },
    errors: [authorizeTargeting, requireSameAgent, uniqueViolation],
    async handler({ params, body, identity, ctx }) {
      await authorizeTargeting(ctx.db.pool, identity, params.id, body.stack_id);
      requireSameAgent(params.id, body.agent_id);
      const target = await ctx.transact(async (tx) => {
        tx.notifyAgents([params.id]);
        return insertTarget(tx.client, params.id, body.stack_id);
      });
      return json(201, target);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/agents/:id/targets/:stack_id',
    summary: 'Remove an explicit target (same checks as creating one)',
    tags,
    access: 'any',
    params: agentTargetParams,
    responses: { 204: { description: 'Removed' } },
    errors: [authorizeTargeting, targetNotFound],
    async handler({ params, identity, ctx }) {
      await authorizeTargeting(ctx.db.pool, identity, params.id, params.stack_id);
      const removed = await ctx.transact(async (tx) => {
        tx.notifyAgents([params.id]);
        return deleteTarget(tx.client, params.id, params.stack_id);
      });
      if (!removed) throw targetNotFound();
      return noContent();
    },
  }),
];
