import { errorKind } from '../../errors/api-error.ts';
import { agentsForStack } from '../../domain/agents-for-stacks.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { requireValidLabel } from '../../domain/labels/validity.ts';
import type { TxScope } from '../../events/transact.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { lockDependencyGraph } from '../../domain/dependency-graph.ts';
import { listDependencies } from './sql/queries.ts';
import { removeDependency } from './sql/remove-dependency.ts';
import { listSelectorDependencies, removeSelectorDependency } from './sql/selectors.ts';
import { dependencyJson, dependencyParams, newStackDependencySchema, stackDependencySchema } from './schemas.ts';
import { addSelectorEdge, addStackEdge, dependencyCycle, dependencyExists } from './writes.ts';

/**
 * A stack's dependencies on other stacks (docs/dependencies.md): the stack is served to an agent
 * only once each of them is ready there (domain/stack-dependencies.ts). The admin or the owning
 * generator reads and changes them, and a generator may depend only on stacks it may read itself
 * (the same fetchOwnedStack that guards the stack). A change wakes the stack's agents, whose
 * target state it may change; like override layers, it is audited and emits no event.
 */

const tags = ['stacks'];

export { dependencyCycle, dependencyExists };
export const dependencyNotFound = errorKind(404, 'dependency_not_found', 'The stack does not depend on this stack');

/** The agents a change of the stack's dependencies may hold back or release. */
async function wakeDependentAgents(tx: TxScope, stackId: string): Promise<void> {
  tx.notifyAgents(await agentsForStack(tx.client, stackId));
}

export const stackDependencyRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/dependencies',
    summary: 'List the stacks a stack depends on, oldest first',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The dependencies', schema: stackDependencySchema.array() } },
    errors: [fetchOwnedStack],
    async handler({ params, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const rows = [...(await listDependencies(ctx.db.pool, params.id)), ...(await listSelectorDependencies(ctx.db.pool, params.id))];
      return json(200, rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()).map(dependencyJson));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/stacks/:id/dependencies',
    summary: 'Make a stack wait for another one',
    description:
      'Until the stack `stack_id` is ready for an agent (`ready_when`: `applied` or `healthy`; `scope`: on the same agent, the default, or on every agent it targets), ' +
      'the agent is not served anything new of this stack: it keeps the newest object of it that it applied, or gets none. ' +
      'Instead of `stack_id`, `selector` `{"labels": […]}` waits for every stack the caller may read that carries all those stack labels ' +
      '(matched when readiness is judged: a stack labelled later joins; one matching nothing is ready; scope `agent`: those that reach the agent). ' +
      'A dependency that would close a cycle is refused (422 `dependency_cycle`, `details.cycle` names the stacks in order, the first one again last).',
    tags,
    access: 'any',
    params: idParams,
    body: newStackDependencySchema,
    responses: { 201: { description: 'The dependency', schema: stackDependencySchema } },
    errors: [fetchOwnedStack, dependencyCycle, dependencyExists, requireValidLabel],
    async handler({ params, body, identity, ctx }) {
      const row = await ctx.transact(async (tx) => {
        await lockDependencyGraph(tx.client);
        // Both stay live until commit (FOR SHARE blocks a concurrent delete of either).
        const stack = await fetchOwnedStack(tx.client, identity, params.id, 'share');
        const added = body.selector
          ? await addSelectorEdge(tx, identity, stack.id, body)
          : await addStackEdge(tx, identity, stack.id, body);
        await wakeDependentAgents(tx, stack.id);
        return added;
      });
      const on = 'selector' in row ? { selector: row.selector } : { depends_on: row.stack_id };
      await ctx.audit({
        actor: identity,
        action: 'stack.dependency_created',
        resourceType: 'stack',
        resourceId: params.id,
        details: { ...on, ready_when: row.ready_when, scope: row.scope },
      });
      return json(201, dependencyJson(row));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/stacks/:id/dependencies/:stack_id',
    summary: 'Stop a stack waiting for another one',
    description: '`{stack_id}` is the stack depended on, or the `id` of a selector dependency.',
    tags,
    access: 'any',
    params: dependencyParams,
    responses: { 204: { description: 'Removed' } },
    errors: [fetchOwnedStack, dependencyNotFound],
    async handler({ params, identity, ctx }) {
      const details = await ctx.transact(async (tx) => {
        const stack = await fetchOwnedStack(tx.client, identity, params.id, 'share');
        const removed = (await removeDependency(tx.client, stack.id, params.stack_id))
          ? { depends_on: params.stack_id }
          : await removeSelectorDependency(tx.client, stack.id, params.stack_id).then((labels) => labels && { selector: { labels } });
        if (!removed) throw dependencyNotFound();
        await wakeDependentAgents(tx, stack.id);
        return removed;
      });
      await ctx.audit({ actor: identity, action: 'stack.dependency_deleted', resourceType: 'stack', resourceId: params.id, details });
      return noContent();
    },
  }),
];
