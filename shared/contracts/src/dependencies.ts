import { z } from 'zod';
import { ROLLOUT_STATUSES } from './rollouts.ts';
import { timestamp, uuid } from './wire.ts';

// Dependencies between stacks (docs/dependencies.md): the api serves them, the CLI and the console
// read them.

export const READY_WHEN = ['applied', 'healthy'] as const;
export const DEPENDENCY_SCOPES = ['agent', 'fleet'] as const;

const readyWhen = z.enum(READY_WHEN).meta({
  description:
    "`applied`: the agent's last event for the dependency's newest object is a SUCCESS; `healthy`: the agent reports that object healthy",
});
const scope = z.enum(DEPENDENCY_SCOPES).meta({
  description: '`agent`: ready on the same agent; `fleet`: ready on every agent the dependency targets',
});

export const dependencySelectorSchema = z
  .strictObject({
    labels: z.array(z.string()).min(1).max(16).meta({ description: 'Stack labels: the selector matches every stack carrying all of them' }),
  })
  .meta({
    id: 'DependencySelector',
    description:
      'Every stack the caller may read (a generator: its own; the admin: any) carrying all the labels, the dependent stack itself excepted, ' +
      'matched when readiness is judged (a stack labelled later joins)',
  });

export const newStackDependencySchema = z
  .strictObject({
    stack_id: uuid().optional().meta({ description: 'The stack depended on (or `selector`)' }),
    selector: dependencySelectorSchema.optional(),
    ready_when: readyWhen,
    scope: scope.default('agent'),
  })
  .refine((d) => (d.stack_id === undefined) !== (d.selector === undefined), {
    message: 'exactly one of stack_id and selector',
  })
  .meta({ id: 'NewStackDependency' });

export const stackDependencySchema = z
  .object({
    id: uuid().optional().meta({ description: 'A selector dependency: its id (`DELETE …/dependencies/{id}` removes it)' }),
    stack_id: uuid().optional().meta({ description: 'The stack depended on (absent for a selector dependency)' }),
    selector: dependencySelectorSchema.optional(),
    dependent_id: uuid().meta({ description: 'The stack that waits for it' }),
    ready_when: readyWhen,
    scope,
    created_at: timestamp(),
    created_by: z.string().meta({ description: '`admin` or `generator:<id>`' }),
  })
  .meta({ id: 'StackDependency' });

const unmetDependency = z.object({
  stack_id: uuid().meta({ description: 'The stack not ready' }),
  ready_when: readyWhen,
  scope,
  selector: dependencySelectorSchema.optional().meta({ description: 'The selector that matched it, for a selector dependency' }),
});

/**
 * GET /stacks/{id}/agents/{agent_id}/status: whether the agent is served the stack now and, if not,
 * why. While it waits, `stack_id`, `ready_when` and `scope` name the first dependency not ready.
 */
export const stackAgentStatusSchema = z
  .object({
    state: z.enum(['served', 'waiting', 'not_targeted', 'no_object']).meta({
      description:
        "`served`: the stack's newest object is in the agent's target state; `waiting`: held back (`reason` says why); " +
        '`not_targeted`: the stack does not reach the agent; `no_object`: the stack has no live object',
    }),
    reason: z
      .enum(['dependency', 'rollout', 'approval', 'window', 'dependents'])
      .optional()
      .meta({
        description:
          '`dependency`: a stack it depends on is not ready for the agent (it gets nothing new of the stack); `rollout`: a progressive rollout ' +
          "holds the agent on the previous object (its wave not released yet); `approval`: the rollout waits for approvals of a wave up to the agent's; " +
          '`window`: a maintenance window holds the newest object back on the agent, which enforces it (`window`, `opens_at`); ' +
          '`dependents`: the stack is deleted, and its deletion marker waits until the stacks depending on it (`dependents`) are gone from the agent',
      }),
    dependents: z
      .array(uuid())
      .optional()
      .meta({ description: 'While a deletion waits for dependents: the stacks depending on it still on the agent' }),
    rollout_id: uuid().optional().meta({ description: 'While a rollout holds the agent: the rollout' }),
    rollout_status: z.enum(ROLLOUT_STATUSES).optional(),
    wave: z
      .number()
      .int()
      .optional()
      .meta({ description: "While a rollout holds the agent: the agent's wave (0 = the first), once assigned" }),
    approval_wave: z.number().int().optional().meta({ description: 'While waiting for approvals: the wave that waits for them' }),
    window: z
      .object({ id: uuid(), name: z.string(), type: z.enum(['allow', 'deny']) })
      .optional()
      .meta({
        description: 'While a maintenance window holds the agent: the window (a deny window open, or the allow window that opens next)',
      }),
    opens_at: timestamp().optional().meta({ description: 'While a window holds the agent: when the change may next go ahead' }),
    stack_id: uuid().optional().meta({ description: 'While waiting: the stack waited for' }),
    ready_when: readyWhen.optional(),
    scope: scope.optional(),
    waiting_on: z.array(unmetDependency).meta({ description: 'Every dependency not ready for this agent, oldest first' }),
  })
  .meta({ id: 'StackAgentStatus' });

export type DependencySelector = z.output<typeof dependencySelectorSchema>;
export type NewStackDependency = z.output<typeof newStackDependencySchema>;
export type StackDependency = z.output<typeof stackDependencySchema>;
export type StackAgentStatus = z.output<typeof stackAgentStatusSchema>;
