import { z } from 'zod';
import { errorKind } from '../../errors/api-error.ts';
import { agentNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { uuid } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { explanationSchema } from '@brokkr/contracts';
import { explainRender } from './explanation.ts';

const agentNotReached = errorKind(404, 'agent_not_reached', 'The stack does not reach this agent (no target, label or annotation match)');
const nothingToExplain = errorKind(404, 'stack_has_no_object', 'The stack has no live deployment object');

/** Why an agent holds what it holds of a stack: its render, the inputs it was made from, and which layer set each field. */
export const explainRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/agents/:agent_id/render',
    summary: "An agent's render of the stack's newest object, its inputs, and which override layer set each field",
    description:
      '`yaml_content` is what the agent is served (null when it has no render: it is served nothing of the stack, `error` says why). ' +
      '`inputs` are what the render was made from as the layers and the agent are now; `fields` lists, in the order they apply, ' +
      'each value or patched field a layer set (the last entry of a path is the one in effect).',
    tags: ['overrides'],
    access: 'any',
    params: z.object({ id: uuid(), agent_id: uuid() }),
    responses: { 200: { description: 'The explanation', schema: explanationSchema } },
    errors: [fetchOwnedStack, agentNotFound, agentNotReached, nothingToExplain],
    async handler({ params, identity, ctx }) {
      const stack = await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const outcome = await explainRender({ ...ctx.rendering, db: ctx.db.pool }, stack, params.agent_id);
      if (outcome === 'no-agent') throw agentNotFound();
      if (outcome === 'not-reached') throw agentNotReached();
      if (outcome === 'no-object') throw nothingToExplain();
      return json(200, outcome);
    },
  }),
];
