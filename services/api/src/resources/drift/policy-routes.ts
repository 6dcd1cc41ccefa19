import { driftPolicySchema, stackDriftPolicySchema } from '@brokkr/contracts';
import { agentsForStack } from '../../domain/agents-for-stacks.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { errorKind } from '../../errors/api-error.ts';
import { idParams } from '../../http/schemas.ts';
import { deleteDriftPolicy } from './sql/delete-policy.ts';
import { putDriftPolicy } from './sql/put-policy.ts';
import { findDriftPolicy } from './sql/queries.ts';

const tags = ['drift'];
const driftPolicyNotFound = errorKind(404, 'drift_policy_not_found', 'The stack has no drift policy (the default applies)');

/**
 * A stack's drift policy (not a Brokkr endpoint): what its agents do about changes made behind
 * their back (docs/drift.md). The stack's owner or an admin manages it; every change wakes the
 * stack's agents, which read it with their grants before they next act.
 */
export const driftPolicyRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/drift-policy',
    summary: "Get a stack's drift policy",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The policy', schema: stackDriftPolicySchema } },
    errors: [fetchOwnedStack, driftPolicyNotFound],
    async handler({ params, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const policy = await findDriftPolicy(ctx.db.pool, params.id);
      if (!policy) throw driftPolicyNotFound();
      return json(200, policy);
    },
  }),

  defineRoute({
    method: 'put',
    path: '/stacks/:id/drift-policy',
    summary: "Set a stack's drift policy: correct or report, what to compare, what to ignore, per-cluster-group overrides",
    tags,
    access: 'any',
    params: idParams,
    body: driftPolicySchema,
    responses: { 200: { description: 'The policy as stored (defaults filled in)', schema: stackDriftPolicySchema } },
    errors: [fetchOwnedStack],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const row = await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        const stored = await putDriftPolicy(tx.client, params.id, body);
        tx.notifyAgents(await agentsForStack(tx.client, params.id));
        return stored;
      });
      await ctx.audit({
        actor: identity,
        action: 'drift.policy_set',
        resourceType: 'stack',
        resourceId: params.id,
        details: { mode: body.mode, comparison: body.comparison, ignore: body.ignore.length, overrides: body.overrides.length },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, row);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/drift-policy',
    summary: "Remove a stack's drift policy (back to the default: correct, owned fields, no ignore rules)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchOwnedStack, driftPolicyNotFound],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        if (!(await deleteDriftPolicy(tx.client, params.id))) throw driftPolicyNotFound();
        tx.notifyAgents(await agentsForStack(tx.client, params.id));
      });
      await ctx.audit({
        actor: identity,
        action: 'drift.policy_deleted',
        resourceType: 'stack',
        resourceId: params.id,
        ipAddress: clientIp,
        userAgent,
      });
      return noContent();
    },
  }),
];
