import type { StackAgentStatus } from '@brokkr/contracts';
import { agentNotFound } from '../../errors/catalogue.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { agentStackView, type AgentStackView } from './sql/queries.ts';
import { stackAgentParams, stackAgentStatusSchema } from './schemas.ts';

/** The one answer to "why is this stack not on this agent now" (so far: its dependencies). */
function statusOf(view: AgentStackView): StackAgentStatus {
  const waitingOn = view.waiting_on;
  if (!view.reaches) return { state: 'not_targeted', waiting_on: waitingOn };
  if (!view.has_object) return { state: 'no_object', waiting_on: waitingOn };
  const first = waitingOn[0];
  if (!first) return { state: 'served', waiting_on: [] };
  return { state: 'waiting', reason: 'dependency', ...first, waiting_on: waitingOn };
}

export const stackAgentStatusRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/agents/:agent_id/status',
    summary: 'Whether an agent is served the stack now and, if not, why',
    description:
      'A stack held back by a dependency not ready for the agent answers `{"state":"waiting","reason":"dependency","stack_id":…,"ready_when":…}`: ' +
      'a state, never an error. `waiting_on` lists every dependency not ready for the agent.',
    tags: ['stacks'],
    access: 'any',
    params: stackAgentParams,
    responses: { 200: { description: 'The status', schema: stackAgentStatusSchema } },
    errors: [fetchOwnedStack, agentNotFound],
    async handler({ params, identity, ctx }) {
      const stack = await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const view = await agentStackView(ctx.db.pool, stack.id, params.agent_id);
      if (!view.agent_exists) throw agentNotFound();
      return json(200, statusOf(view));
    },
  }),
];
