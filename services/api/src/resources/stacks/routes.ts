import { errorKind } from '../../errors/api-error.ts';
import { foreignKeyViolation, uniqueViolation } from '../../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack, stackIdMismatch } from '../../domain/stack-access.ts';
import { auditDeniedOwnerChange, requireOwnerKept, stackOwnerChangeDenied, stackUpdatedDetails } from './owner.ts';
import { newStackSchema, stackSchema, stackUpdateSchema } from './schemas.ts';
import { insertStack } from './sql/create-stack.ts';
import { softDeleteStack } from './sql/delete-stack.ts';
import { listLiveStacks } from './sql/queries.ts';
import { updateStack } from './sql/update-stack.ts';
import { wakeStackAgents } from './wake-agents.ts';
import { publishStackInvalidation } from '../../events/stack-invalidation.ts';
import { resolveExpiry } from './expiry.ts';
import { stackJson } from './serialize.ts';

const tags = ['stacks'];

// The stacks → generators foreign key; a deleted generator is reported as if it did not exist.
const unknownGenerator = () => foreignKeyViolation.with('The generator does not exist', { constraint: 'stacks_generator_id_fkey' });
const stacksListDenied = errorKind(403, 'stacks_list_denied', 'Agents cannot list stacks');
const stackCreateDenied = errorKind(403, 'stack_create_denied', 'Agents cannot create stacks');
const stackGeneratorMismatch = errorKind(403, 'stack_generator_mismatch', 'A generator can only create stacks for itself');

export const stackRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks',
    summary: 'List stacks (admin: all; generator: its own)',
    tags,
    access: 'any',
    responses: { 200: { description: 'Live stacks', schema: stackSchema.array() } },
    errors: [stacksListDenied],
    async handler({ identity, ctx }) {
      if (!identity.admin && identity.generator === null) throw stacksListDenied();
      const stacks = await listLiveStacks(ctx.db.pool, identity.admin ? null : identity.generator);
      return json(200, stacks.map(stackJson));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/stacks',
    summary: 'Create a stack (a generator only for itself)',
    tags,
    access: 'any',
    body: newStackSchema,
    responses: { 201: { description: 'The stack', schema: stackSchema } },
    errors: [stackCreateDenied, stackGeneratorMismatch, resolveExpiry, foreignKeyViolation, uniqueViolation],
    async handler({ body, identity, ctx, clientIp, userAgent }) {
      if (!identity.admin) {
        if (identity.generator === null) throw stackCreateDenied();
        if (identity.generator !== body.generator_id) throw stackGeneratorMismatch();
      }
      const expiresAt = resolveExpiry(body);
      const stack = await ctx.transact(async (tx) => {
        const row = await insertStack(tx.client, {
          name: body.name,
          description: body.description ?? null,
          generatorId: body.generator_id,
          expiresAt,
        });
        if (!row) throw unknownGenerator();
        tx.emit('stack.created', {
          stack_id: row.id,
          name: row.name,
          description: row.description,
          created_at: row.created_at.toISOString(),
        });
        return row;
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.created',
        resourceType: 'stack',
        resourceId: stack.id,
        details: { name: stack.name, generator_id: stack.generator_id, ...(expiresAt ? { expires_at: expiresAt.toISOString() } : {}) },
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, stackJson(stack));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id',
    summary: 'Get a stack',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The stack', schema: stackSchema } },
    errors: [fetchOwnedStack],
    handler: async ({ params, identity, ctx }) => json(200, stackJson(await fetchOwnedStack(ctx.db.pool, identity, params.id))),
  }),

  defineRoute({
    method: 'put',
    path: '/stacks/:id',
    summary: 'Update a stack (full object; name, description and generator_id are written; only an admin may change generator_id)',
    tags,
    access: 'any',
    params: idParams,
    body: stackUpdateSchema,
    responses: { 200: { description: 'The updated stack', schema: stackSchema } },
    errors: [fetchOwnedStack, stackIdMismatch, stackOwnerChangeDenied, foreignKeyViolation, uniqueViolation],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      const { stack, oldOwner } = await ctx
        .transact(async (tx) => {
          const current = await fetchOwnedStack(tx.client, identity, params.id, 'update');
          if (body.id !== params.id) throw stackIdMismatch();
          requireOwnerKept(identity, current.generator_id, body.generator_id);
          const fields = { name: body.name, description: body.description ?? null, generatorId: body.generator_id };
          const updated = await updateStack(tx.client, params.id, fields);
          if (!updated) throw unknownGenerator();
          // Moving a stack to another generator changes which agents match it by label/annotation.
          if (updated.generator_id !== current.generator_id) {
            await wakeStackAgents(tx, params.id, { generatorIds: [current.generator_id] });
            // The old owner's live sockets on the stack close on every replica.
            tx.afterCommit(() => publishStackInvalidation(ctx.bus.nc, { stack_id: params.id }, ctx.logger));
          }
          return { stack: updated, oldOwner: current.generator_id };
        })
        .catch((err: unknown) => auditDeniedOwnerChange(ctx, err, { identity, stackId: params.id, clientIp, userAgent }));
      await ctx.audit({
        actor: identity,
        action: 'stack.updated',
        resourceType: 'stack',
        resourceId: stack.id,
        details: stackUpdatedDetails(stack.name, oldOwner, stack.generator_id),
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, stackJson(stack));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id',
    summary: 'Delete a stack (soft; its agents receive a deletion marker)',
    tags,
    access: 'any',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [fetchOwnedStack],
    async handler({ params, identity, ctx, clientIp, userAgent }) {
      await ctx.transact(async (tx) => {
        await fetchOwnedStack(tx.client, identity, params.id, 'update');
        const deletedAt = await softDeleteStack(tx.client, params.id);
        tx.emit('stack.deleted', { stack_id: params.id, deleted_at: deletedAt?.toISOString() ?? null });
        await wakeStackAgents(tx, params.id);
      });
      await ctx.audit({
        actor: identity,
        action: 'stack.deleted',
        resourceType: 'stack',
        resourceId: params.id,
        ipAddress: clientIp,
        userAgent,
      });
      return noContent();
    },
  }),
];
