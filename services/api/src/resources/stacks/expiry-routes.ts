import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { requireExpiry } from './expiry.ts';
import { stackExpiryInputSchema, stackExpirySchema } from './schemas.ts';
import { setStackExpiry } from './sql/set-stack-expiry.ts';
import type { StackRow } from '../../domain/stack-row.ts';

const tags = ['stacks'];

const expiryJson = (stack: StackRow) => ({ stack_id: stack.id, expires_at: stack.expires_at?.toISOString() ?? null });

/**
 * Expiring stacks (preview environments; not a Brokkr endpoint): maintenance announces an
 * expiring stack (`stack.expiring`) and then deletes it as DELETE /stacks/{id} does. The stack's
 * owner or an admin sets, moves or clears the expiry.
 */
export const stackExpiryRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/expiry',
    summary: "Get a stack's expiry (expires_at null: the stack does not expire)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The expiry', schema: stackExpirySchema } },
    errors: [fetchOwnedStack],
    handler: async ({ params, identity, ctx }) => json(200, expiryJson(await fetchOwnedStack(ctx.db.pool, identity, params.id))),
  }),

  defineRoute({
    method: 'put',
    path: '/stacks/:id/expiry',
    summary: 'Set or move the instant maintenance deletes the stack (expires_at or ttl_seconds)',
    tags,
    access: 'any',
    params: idParams,
    body: stackExpiryInputSchema,
    responses: { 200: { description: 'The new expiry', schema: stackExpirySchema } },
    errors: [fetchOwnedStack, requireExpiry],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const expiresAt = requireExpiry(body);
      const stack = await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'update');
        return (await setStackExpiry(tx.client, params.id, expiresAt))!;
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.expiry_set',
        resourceType: 'stack',
        resourceId: stack.id,
        details: { expires_at: expiresAt.toISOString() },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, expiryJson(stack));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/expiry',
    summary: 'Clear the expiry: the stack stays until deleted',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The expiry, now null', schema: stackExpirySchema } },
    errors: [fetchOwnedStack],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      const stack = await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'update');
        return (await setStackExpiry(tx.client, params.id, null))!;
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.expiry_cleared',
        resourceType: 'stack',
        resourceId: stack.id,
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, expiryJson(stack));
    },
  }),
];
