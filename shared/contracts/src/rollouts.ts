import { z } from 'zod';

/**
 * Progressive rollouts (not a Brokkr feature): a stack's policy, as the api stores it and the
 * rollouts task in maintenance reads it. Waves are released in order; a wave names its agents by
 * labels (all of them) or by the cumulative share of the targeted agents updated once it is out.
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
