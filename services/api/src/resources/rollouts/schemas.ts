import { z } from 'zod';
import { ROLLOUT_STATUSES, rolloutPolicySchema } from '@brokkr/contracts';
import { timestamp, uuid } from '../../http/schemas.ts';

export { rolloutPolicySchema };

export const stackRolloutPolicySchema = z
  .object({
    stack_id: uuid(),
    policy: rolloutPolicySchema,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'StackRolloutPolicy' });

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

/** A rollout in the fleet-wide list: the Rollout plus its stack's name. */
export const fleetRolloutSchema = rolloutSchema.extend({ stack_name: z.string() }).meta({ id: 'FleetRollout' });
