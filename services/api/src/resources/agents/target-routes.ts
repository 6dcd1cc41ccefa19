import { errorKind } from '../../errors/api-error.ts';
import { uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { authorizeTargeting } from './access.ts';
import { requireAdminOrSelf, requireSameAgent } from '../../domain/agent-access.ts';
import { agentTargetParams, agentTargetSchema, newAgentTargetSchema } from './schemas.ts';
import { insertTarget } from './sql/add-target.ts';
import { listTargets } from './sql/queries.ts';
import { deleteTarget } from './sql/remove-target.ts';

const tags = ['agents'];
const targetNotFound = errorKind(404, 'agent_target_not_found', 'Agent target not found');

/** Explicit stack targets: the one association that needs no label or annotation match. */
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
