import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

/**
 * Progressive rollouts (not a Brokkr feature): a stack's policy, as the api stores it and the
 * rollouts task in maintenance reads it, and the rollouts the api serves to clients (the CLI).
 * Waves are released in order; a wave names its agents by labels (all of them) or by the
 * cumulative share of the targeted agents updated once it is out.
 */
export const rolloutWaveSchema = z
  .object({
    name: z.string().min(1).max(63),
    selector: z
      .object({ labels: z.array(z.string().min(1).max(64)).min(1).max(20) })
      .strict()
      .optional()
      .meta({ description: 'Agents carrying every one of these labels' }),
    percent: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'Cumulative share of the targeted agents updated after this wave' }),
    max_failures: z.number().int().min(0).max(100_000).default(0).meta({ description: 'Failed agents in this wave before the gate fails' }),
    soak_seconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(60)
      .meta({ description: 'Applied and healthy this long before the next wave' }),
    progress_deadline_seconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .default(600)
      .meta({ description: 'The gate fails when the wave is not applied and healthy by then' }),
    required_approvals: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(0)
      .meta({ description: 'Unexpired approvals of what this wave will ship needed before it is released' }),
    approvers: z
      .array(uuid())
      .max(50)
      .default([])
      .meta({ description: 'Generators that may approve this wave (an admin always may); never the submitter of the object' }),
    approval_ttl_seconds: z
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(86_400)
      .meta({ description: 'How long an approval counts' }),
  })
  .strict()
  .refine((w) => (w.selector === undefined) !== (w.percent === undefined), { message: 'a wave has either selector or percent' })
  .refine((w) => new Set(w.approvers).size === w.approvers.length, { message: 'approvers must be unique' })
  .refine((w) => w.required_approvals <= w.approvers.length + 1, {
    message: 'required_approvals exceeds who may approve (the approvers and an admin)',
  })
  .meta({ id: 'RolloutWave' });
export type RolloutWave = z.output<typeof rolloutWaveSchema>;

export const rolloutPolicySchema = z
  .object({
    waves: z.array(rolloutWaveSchema).min(1).max(20),
    auto_rollback: z.boolean().default(true).meta({ description: 'Serve the previous object again when a gate fails' }),
  })
  .strict()
  .refine((p) => new Set(p.waves.map((w) => w.name)).size === p.waves.length, { message: 'wave names must be unique' })
  .refine(
    (p) => {
      const shares = p.waves.flatMap((w) => (w.percent === undefined ? [] : [w.percent]));
      return shares.every((s, i) => i === 0 || s >= shares[i - 1]!);
    },
    { message: 'percent is cumulative: it may not decrease from one wave to the next' },
  )
  .meta({ id: 'RolloutPolicy' });
export type RolloutPolicy = z.output<typeof rolloutPolicySchema>;

export const ROLLOUT_STATUSES = [
  'pending',
  'progressing',
  'paused',
  'succeeded',
  'promoted',
  'failed',
  'rolled_back',
  'aborted',
  'superseded',
] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/** Statuses in which the rollouts task still moves the rollout on. */
export const ACTIVE_ROLLOUT_STATUSES: readonly RolloutStatus[] = ['pending', 'progressing'];

/** GET and PUT /stacks/{id}/rollout-policy. */
export const stackRolloutPolicySchema = z
  .object({
    stack_id: uuid(),
    policy: rolloutPolicySchema,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'StackRolloutPolicy' });
export type StackRolloutPolicy = z.output<typeof stackRolloutPolicySchema>;

/** One wave of a rollout as the api reports it (docs/rollouts.md). */
export const rolloutWaveStatusSchema = z
  .object({
    index: z.number().int(),
    name: z.string(),
    released: z.boolean(),
    agents: z.number().int(),
    applied: z.number().int().meta({ description: 'Agents whose last event for the object is a success' }),
    healthy: z.number().int(),
    failed: z.number().int(),
    required_approvals: z.number().int(),
    approvals: z.number().int().meta({ description: 'Unexpired approvals of the digest the wave would ship now' }),
    awaiting_approval: z.boolean().meta({ description: 'Every gate before this wave passed; it waits for approvals' }),
  })
  .meta({ id: 'RolloutWaveStatus' });
export type RolloutWaveStatus = z.output<typeof rolloutWaveStatusSchema>;

export const rolloutSchema = z
  .object({
    id: uuid(),
    stack_id: uuid(),
    deployment_object_id: uuid(),
    baseline_object_id: uuid(),
    status: z.enum(ROLLOUT_STATUSES),
    released_wave: z.number().int().meta({ description: '-1 before the first wave is released' }),
    approval_wave: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The wave the rollout waits at for approvals (every gate before it passed), or null' }),
    message: z.string().nullable(),
    policy: rolloutPolicySchema,
    waves: z.array(rolloutWaveStatusSchema),
    created_at: timestamp(),
    updated_at: timestamp(),
    finished_at: timestamp().nullable(),
  })
  .meta({ id: 'Rollout' });
export type Rollout = z.output<typeof rolloutSchema>;

/** A rollout in the fleet-wide list (GET /rollouts): the Rollout plus its stack's name. */
export const fleetRolloutSchema = rolloutSchema.extend({ stack_name: z.string() }).meta({ id: 'FleetRollout' });
export type FleetRollout = z.output<typeof fleetRolloutSchema>;

/** Who approved: an admin, or a generator (approver_id). */
export const APPROVER_TYPES = ['admin', 'generator'] as const;

/** POST /rollouts/{id}/waves/{wave}/approvals. */
export const rolloutApprovalRequestSchema = z
  .object({
    digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .optional()
      .meta({ description: 'The digest the approver reviewed: refused (409) when the wave would now ship something else' }),
    comment: z.string().max(1000).optional(),
  })
  .strict()
  .meta({ id: 'RolloutApprovalRequest' });
export type RolloutApprovalRequest = z.output<typeof rolloutApprovalRequestSchema>;

/** One approval of a rollout's wave, bound to the digest of what the wave ships. */
export const rolloutApprovalSchema = z
  .object({
    id: uuid(),
    rollout_id: uuid(),
    wave: z.number().int(),
    digest: z.string().meta({ description: "sha256 of the deployment object's checksum and the stack's override layers revision" }),
    approver_type: z.enum(APPROVER_TYPES),
    approver_id: uuid().nullable(),
    comment: z.string().nullable(),
    created_at: timestamp(),
    expires_at: timestamp(),
    counts: z.boolean().meta({ description: 'Unexpired and bound to the current digest' }),
  })
  .meta({ id: 'RolloutApproval' });
export type RolloutApproval = z.output<typeof rolloutApprovalSchema>;

/** A wave's approvals: GET …/approvals, and the answer to an approval (with the one just given). */
export const waveApprovalsSchema = z
  .object({
    rollout_id: uuid(),
    wave: z.number().int(),
    name: z.string(),
    digest: z.string().meta({ description: 'What the wave would ship now' }),
    required_approvals: z.number().int(),
    approvals_counted: z.number().int(),
    released: z.boolean(),
    awaiting_approval: z.boolean(),
    approvals: z.array(rolloutApprovalSchema),
  })
  .meta({ id: 'WaveApprovals' });
export type WaveApprovals = z.output<typeof waveApprovalsSchema>;

/** GET /approval-requests: a wave of an open rollout the caller may approve, and how far its count is. */
export const approvalRequestSchema = z
  .object({
    rollout_id: uuid(),
    stack_id: uuid(),
    stack_name: z.string(),
    deployment_object_id: uuid(),
    status: z.enum(ROLLOUT_STATUSES),
    wave: z.number().int(),
    name: z.string(),
    digest: z.string(),
    required_approvals: z.number().int(),
    approvals_counted: z.number().int(),
    awaiting_approval: z.boolean().meta({ description: 'Every gate before the wave passed: it is released once approved' }),
    approvers: z.array(uuid()),
  })
  .meta({ id: 'ApprovalRequest' });
export type ApprovalRequest = z.output<typeof approvalRequestSchema>;
