import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

/**
 * Drift (not a Brokkr feature): a change made to an applied object behind the agent's back. The
 * stack's policy says what the agent does about it; the agent reports what it found in batches;
 * the hub keeps one record per drifted object and episode (docs/drift.md).
 */

export const DRIFT_MODES = ['correct', 'report'] as const;
export type DriftMode = (typeof DRIFT_MODES)[number];
export const DRIFT_COMPARISONS = ['owned', 'full'] as const;
export type DriftComparison = (typeof DRIFT_COMPARISONS)[number];
export const DRIFT_STATES = ['open', 'corrected', 'resolved', 'accepted'] as const;
export type DriftState = (typeof DRIFT_STATES)[number];
/** What an agent may say about an episode; `accepted` is the operator's. */
export const DRIFT_REPORT_STATES = ['open', 'corrected', 'resolved'] as const;

/** RFC 6901, with `*` as a segment matching any one key or index (ignore rules only). */
const jsonPointer = () =>
  z
    .string()
    .max(512)
    .regex(/^(\/([^~/]|~[01])*)+$/, 'a JSON pointer (RFC 6901), e.g. /spec/replicas');

const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*?}](?:[^()\\]|\\.)*\)\s*(?:[+*?]|\{\d)/;
const BACKTRACKING_FEATURE = /\\[1-9]|\(\?<?[=!]|\\k</;

/**
 * A field-manager pattern the agent can run safely: a JavaScript regular expression of at most
 * 200 characters without backreferences, lookarounds or a quantified group that holds a
 * quantifier (the shapes whose matching time explodes). The agent evaluates a tenant's pattern on
 * a cluster other tenants share, so a pattern must not be able to stall it.
 */
export function isSafeManagerPattern(pattern: string): boolean {
  if (pattern.length > 200 || NESTED_QUANTIFIER.test(pattern) || BACKTRACKING_FEATURE.test(pattern)) return false;
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

const managerPattern = () =>
  z.string().min(1).max(200).refine(isSafeManagerPattern, {
    message: 'a regular expression without backreferences, lookarounds or nested quantifiers (at most 200 characters)',
  });

export const driftTargetSchema = z
  .object({
    group: z.string().max(253).optional().meta({ description: "API group ('' for the core group)" }),
    kind: z.string().min(1).max(63).optional(),
    namespace: z.string().max(63).optional(),
    name: z.string().min(1).max(253).optional(),
  })
  .strict()
  .meta({ id: 'DriftTarget' });
export type DriftTarget = z.output<typeof driftTargetSchema>;

/**
 * Drift that is not drift for this stack: every object the target names (all when absent), at the
 * JSON pointers given (and below them; the whole object when none, including its deletion), when
 * the field's manager matches one of the patterns (any manager when none).
 */
export const driftIgnoreRuleSchema = z
  .object({
    target: driftTargetSchema.optional(),
    paths: z.array(jsonPointer()).max(50).optional(),
    managers: z
      .array(managerPattern())
      .max(20)
      .optional()
      .meta({ description: 'Field-manager regular expressions, e.g. ^hpa-controller$' }),
    note: z.string().max(500).optional(),
    accepted_from: uuid().optional().meta({ description: 'The drift record whose acceptance made this rule' }),
  })
  .strict()
  .meta({ id: 'DriftIgnoreRule' });
export type DriftIgnoreRule = z.output<typeof driftIgnoreRuleSchema>;

/** A cluster group's exception: agents carrying every label listed. */
export const driftPolicyOverrideSchema = z
  .object({
    agent_labels: z.array(z.string().min(1).max(64)).min(1).max(20),
    mode: z.enum(DRIFT_MODES).optional(),
    comparison: z.enum(DRIFT_COMPARISONS).optional(),
    ignore: z.array(driftIgnoreRuleSchema).max(100).optional().meta({ description: "Added to the stack's rules" }),
  })
  .strict()
  .meta({ id: 'DriftPolicyOverride' });

export const driftPolicySchema = z
  .object({
    mode: z.enum(DRIFT_MODES).default('correct').meta({
      description: '`correct`: drift is re-applied over at once and recorded; `report`: never overwritten, the record stays open',
    }),
    comparison: z
      .enum(DRIFT_COMPARISONS)
      .default('owned')
      .meta({ description: '`owned`: the fields the manifest sets; `full`: also fields others added to the object' }),
    ignore: z.array(driftIgnoreRuleSchema).max(200).default([]),
    overrides: z
      .array(driftPolicyOverrideSchema)
      .max(20)
      .default([])
      .meta({ description: 'Per cluster group: the first whose agent_labels the agent all carries applies' }),
  })
  .strict()
  .meta({ id: 'DriftPolicy' });
export type DriftPolicy = z.output<typeof driftPolicySchema>;

/** GET/PUT /stacks/{id}/drift-policy. */
export const stackDriftPolicySchema = z
  .object({ stack_id: uuid(), policy: driftPolicySchema, created_at: timestamp().nullable(), updated_at: timestamp().nullable() })
  .meta({ id: 'StackDriftPolicy' });

/** The policy one agent follows for one stack (its cluster group's override folded in), in its grants. */
export const effectiveDriftPolicySchema = z
  .object({ mode: z.enum(DRIFT_MODES), comparison: z.enum(DRIFT_COMPARISONS), ignore: z.array(driftIgnoreRuleSchema) })
  .meta({ id: 'EffectiveDriftPolicy' });
export type EffectiveDriftPolicy = z.output<typeof effectiveDriftPolicySchema>;

export const DEFAULT_DRIFT_POLICY: EffectiveDriftPolicy = { mode: 'correct', comparison: 'owned', ignore: [] };

/** The stack's policy for an agent with these labels: the first override they all match, folded in. */
export function resolveDriftPolicy(policy: DriftPolicy, agentLabels: readonly string[]): EffectiveDriftPolicy {
  const labels = new Set(agentLabels);
  const override = policy.overrides.find((o) => o.agent_labels.every((l) => labels.has(l)));
  return {
    mode: override?.mode ?? policy.mode,
    comparison: override?.comparison ?? policy.comparison,
    ignore: [...policy.ignore, ...(override?.ignore ?? [])],
  };
}

export const driftObjectSchema = z
  .object({
    api_version: z.string().min(1).max(253),
    kind: z.string().min(1).max(63),
    namespace: z.string().max(63).nullable(),
    name: z.string().min(1).max(253),
  })
  .strict()
  .meta({ id: 'DriftObject' });
export type DriftObject = z.output<typeof driftObjectSchema>;

/** Values are kept small: a drifted subtree beyond this is cut (the path still says where). */
export const DRIFT_VALUE_MAX_CHARS = 4096;

export const driftFieldSchema = z
  .object({
    path: z.string().max(1024).meta({ description: 'JSON pointer of the drifted field' }),
    desired: z.unknown().meta({ description: 'What the stack sets (null: the stack does not set it)' }),
    live: z.unknown().meta({ description: 'What the cluster holds (null: removed)' }),
    manager: z.string().max(256).nullable().meta({ description: 'The field manager that owns the live value (managedFields)' }),
    operation: z.string().max(32).nullable().meta({ description: 'Apply or Update' }),
    time: z.string().max(64).nullable().meta({ description: "When that manager's entry last changed" }),
    withheld: z.boolean().optional().meta({ description: 'Values withheld: Secret data never leaves the cluster' }),
  })
  .strict()
  .meta({ id: 'DriftField' });
export type DriftField = z.output<typeof driftFieldSchema>;

/** One object's drift as an agent reports it; `id` names the episode, so a batch sent twice changes nothing. */
export const driftReportSchema = z
  .object({
    id: uuid(),
    stack_id: uuid(),
    deployment_object_id: uuid().nullable(),
    object: driftObjectSchema,
    state: z.enum(DRIFT_REPORT_STATES),
    missing: z.boolean().default(false).meta({ description: 'The object was deleted' }),
    fields: z.array(driftFieldSchema).max(200).default([]),
    observed_at: timestamp(),
  })
  .strict()
  .meta({ id: 'DriftReport' });
export type DriftReport = z.input<typeof driftReportSchema>;

export const driftReportBatchSchema = z
  .object({
    reports: z.array(driftReportSchema).max(500),
    sweep: z
      .object({ stack_ids: z.array(uuid()).max(10_000), started_at: timestamp() })
      .strict()
      .optional()
      .meta({
        description:
          'A full check of these stacks began at started_at and every drift it found was reported: open records of them not seen since are resolved',
      }),
  })
  .strict()
  .meta({ id: 'DriftReportBatch' });
export type DriftReportBatch = z.input<typeof driftReportBatchSchema>;

export const driftRecordSchema = z
  .object({
    id: uuid(),
    stack_id: uuid(),
    stack_name: z.string(),
    agent_id: uuid(),
    agent_name: z.string(),
    cluster_name: z.string(),
    deployment_object_id: uuid().nullable(),
    object: driftObjectSchema,
    missing: z.boolean(),
    fields: z.array(driftFieldSchema),
    state: z.enum(DRIFT_STATES),
    first_seen: timestamp(),
    last_seen: timestamp(),
    closed_at: timestamp().nullable(),
  })
  .meta({ id: 'DriftRecord' });
export type DriftRecord = z.output<typeof driftRecordSchema>;

export const driftPageSchema = z
  .object({
    items: z.array(driftRecordSchema),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'DriftPage' });
export type DriftPage = z.output<typeof driftPageSchema>;

export const DRIFT_GROUPINGS = ['field', 'manager', 'agent', 'stack', 'kind', 'stack_agent'] as const;
export type DriftGrouping = (typeof DRIFT_GROUPINGS)[number];

export const driftGroupSchema = z
  .object({
    key: z.string().meta({ description: 'The path, manager, agent id, stack id, kind, or `<stack id>/<agent id>`' }),
    label: z.string().nullable().meta({ description: 'The agent or stack name (and cluster), where the key is an id' }),
    stack_id: uuid().nullable(),
    agent_id: uuid().nullable(),
    records: z.number().int(),
    agents: z.number().int().meta({ description: 'Distinct agents (clusters) with such drift' }),
    stacks: z.number().int(),
    managers: z
      .array(z.object({ manager: z.string().nullable(), records: z.number().int() }))
      .meta({ description: 'Most frequent first, at most 5' }),
  })
  .meta({ id: 'DriftGroup' });

export const driftGroupsSchema = z
  .object({
    by: z.enum(DRIFT_GROUPINGS),
    records: z.number().int().meta({ description: 'Records matching the filters' }),
    agents: z.number().int().meta({ description: 'Distinct agents among them' }),
    agents_total: z
      .number()
      .int()
      .meta({ description: 'Agents the stack (or every stack you may read) is served to: the "of N clusters"' }),
    groups: z.array(driftGroupSchema),
  })
  .meta({ id: 'DriftGroups' });
export type DriftGroups = z.output<typeof driftGroupsSchema>;

export const driftAcceptSchema = z
  .object({
    scope: z
      .enum(['fields', 'object', 'override'])
      .default('fields')
      .meta({
        description:
          "`fields`: ignore the record's paths on this object; `object`: ignore the whole object; `override`: keep the live values " +
          "as an override layer of the stack for the record's agent (its render then holds them, so they are no drift)",
      }),
    note: z.string().max(500).optional(),
  })
  .strict()
  .meta({ id: 'DriftAccept' });
