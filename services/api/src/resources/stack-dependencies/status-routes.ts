import type { RolloutStatus, StackAgentStatus } from '@brokkr/contracts';
import { gateDecision } from '@brokkr/grants';
import type { ApiContext } from '../../context.ts';
import { queryAgentGrants } from '../../domain/grants.ts';
import { agentNotFound } from '../../errors/catalogue.ts';
import { fetchOwnedStackEvenDeleted } from './sql/queries.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { agentStackView, type AgentStackView } from './sql/queries.ts';
import { stackAgentParams, stackAgentStatusSchema } from './schemas.ts';

/**
 * Held by a rollout: `approval` when the wave the rollout waits at for approvals is this agent's or
 * an earlier one (nothing reaches the agent before approvers act), else `rollout` (its wave is not
 * released yet, or the rollout holds everyone on the baseline).
 */
function rolloutStatus(held: NonNullable<AgentStackView['held_by']>): StackAgentStatus {
  const { rollout_id, status, wave, approval_wave } = held;
  const byApproval = approval_wave !== null && (wave === null || approval_wave <= wave);
  return {
    state: 'waiting',
    reason: byApproval ? 'approval' : 'rollout',
    rollout_id,
    rollout_status: status as RolloutStatus,
    ...(wave !== null ? { wave } : {}),
    ...(byApproval ? { approval_wave } : {}),
    waiting_on: [],
  };
}

/**
 * The one answer to "why is this stack not on this agent now": for a deleted stack, the stacks
 * depending on it still on the agent (its deletion marker waits: reverse-order deletion); else a
 * dependency not ready (the agent gets nothing new of the stack), else a rollout holding it on
 * the previous object.
 */
function statusOf(view: AgentStackView, window: WindowHold | undefined): StackAgentStatus {
  const waitingOn = view.waiting_on;
  if (!view.reaches) return { state: 'not_targeted', waiting_on: waitingOn };
  if (!view.has_object) return { state: 'no_object', waiting_on: waitingOn };
  const dependents = view.dependents ?? [];
  if (dependents.length > 0) return { state: 'waiting', reason: 'dependents', stack_id: dependents[0], dependents, waiting_on: [] };
  const first = waitingOn[0];
  if (first) return { state: 'waiting', reason: 'dependency', ...first, waiting_on: waitingOn };
  if (view.held_by) return rolloutStatus(view.held_by);
  return window ? { state: 'waiting', reason: 'window', ...window, waiting_on: [] } : { state: 'served', waiting_on: [] };
}

type WindowHold = Pick<StackAgentStatus, 'window' | 'opens_at'>;

/**
 * The maintenance window that holds the stack's newest object back on the agent now, judged by
 * the rule and the schedule the agent itself enforces with (its grants, @brokkr/grants): none
 * once the agent applied that object, whatever the window says.
 */
async function windowHold(ctx: ApiContext, stack: { id: string; generator_id: string }, agentId: string): Promise<WindowHold | undefined> {
  const grants = await queryAgentGrants(ctx.db.pool, agentId);
  const decision = gateDecision(grants.maintenance, 'new_versions', { stackId: stack.id, generatorId: stack.generator_id }, Date.now());
  if (!decision.blocked || !decision.window) return undefined;
  return { window: decision.window, ...(decision.opensAt !== undefined ? { opens_at: new Date(decision.opensAt).toISOString() } : {}) };
}

export const stackAgentStatusRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/agents/:agent_id/status',
    summary: 'Whether an agent is served the stack now and, if not, why',
    description:
      'A stack held back by a dependency not ready for the agent answers `{"state":"waiting","reason":"dependency","stack_id":…,"ready_when":…}`: ' +
      'a state, never an error. `waiting_on` lists every dependency not ready for the agent. A rollout holding the agent on the previous object ' +
      'answers `reason` `rollout` (its wave is not released yet) or `approval` (a wave up to its own waits for approvals), with `rollout_id` and `wave`. ' +
      'A deleted stack whose deletion marker waits because stacks depending on it are still on the agent (reverse-order deletion) answers ' +
      '`reason` `dependents`, with `dependents` those stacks (`stack_id` the first); a deleted stack is answered for too. ' +
      'A maintenance window holding the newest object back on the agent (by the schedule the agent enforces) answers `reason` `window`, ' +
      'with `window` and `opens_at`.',
    tags: ['stacks'],
    access: 'any',
    params: stackAgentParams,
    responses: { 200: { description: 'The status', schema: stackAgentStatusSchema } },
    errors: [fetchOwnedStackEvenDeleted, agentNotFound],
    async handler({ params, identity, ctx }) {
      const stack = await fetchOwnedStackEvenDeleted(ctx.db.pool, identity, params.id);
      const view = await agentStackView(ctx.db.pool, stack.id, params.agent_id);
      if (!view.agent_exists) throw agentNotFound();
      const judgedByWindow = view.reaches && view.has_object && !view.newest_applied;
      return json(200, statusOf(view, judgedByWindow ? await windowHold(ctx, stack, params.agent_id) : undefined));
    },
  }),
];
