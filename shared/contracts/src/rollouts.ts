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
  })
  .strict()
  .refine((w) => (w.selector === undefined) !== (w.percent === undefined), { message: 'a wave has either selector or percent' })
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
