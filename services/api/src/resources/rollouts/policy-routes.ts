import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { errorKind } from '../../errors/api-error.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { rolloutPolicySchema, stackRolloutPolicySchema } from './schemas.ts';
import { deletePolicy } from './sql/delete-policy.ts';
import { putPolicy } from './sql/put-policy.ts';
import { findPolicy, unknownGenerators } from './sql/queries.ts';

const tags = ['rollouts'];
const policyNotFound = errorKind(404, 'rollout_policy_not_found', 'The stack has no rollout policy');
const unknownApprover = errorKind(422, 'unknown_approver', 'An approver of a wave is no generator');

/**
 * A stack's rollout policy (not a Brokkr endpoint): with one, each new deployment object of the
 * stack reaches its agents wave by wave (ADR 0016). The stack's owner or an admin manages it.
 */
export const rolloutPolicyRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/rollout-policy',
    summary: "Get a stack's rollout policy",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The policy', schema: stackRolloutPolicySchema } },
    errors: [fetchOwnedStack, policyNotFound],
    async handler({ params, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const policy = await findPolicy(ctx.db.pool, params.id);
      if (!policy) throw policyNotFound();
      return json(200, policy);
    },
  }),

  defineRoute({
    method: 'put',
    path: '/stacks/:id/rollout-policy',
    summary: "Set a stack's rollout policy (applies from the next deployment object)",
    tags,
    access: 'any',
    params: idParams,
    body: rolloutPolicySchema,
    responses: { 200: { description: 'The policy as stored (defaults filled in)', schema: stackRolloutPolicySchema } },
    errors: [fetchOwnedStack, unknownApprover],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const policy = await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        // A mistyped approver would make a wave that nobody but an admin can ever release.
        const unknown = await unknownGenerators(tx.client, [...new Set(body.waves.flatMap((w) => w.approvers))]);
        if (unknown.length) throw unknownApprover({ approvers: unknown });
        return putPolicy(tx.client, params.id, body);
      });
      await ctx.audit({
        actor: identity,
        action: 'rollout.policy_set',
        resourceType: 'stack',
        resourceId: params.id,
        details: { waves: body.waves.length, auto_rollback: body.auto_rollback },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, policy);
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/rollout-policy',
    summary: "Remove a stack's rollout policy (new objects go to every agent at once again)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchOwnedStack, policyNotFound],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'share');
        if (!(await deletePolicy(tx.client, params.id))) throw policyNotFound();
      });
      await ctx.audit({
        actor: identity,
        action: 'rollout.policy_deleted',
        resourceType: 'stack',
        resourceId: params.id,
        ipAddress: clientIp,
        userAgent,
      });
      return noContent();
    },
  }),
];
