import { z } from 'zod';
import { HEALTH_STATUSES } from '@brokkr/contracts';
import { uuid } from '../../http/schemas.ts';

/** A deployment object's health, as clients read it, is @brokkr/contracts' (health.ts). */
export { deploymentHealthSchema, deploymentObjectHealthResponseSchema } from '@brokkr/contracts';

export const stackHealthResponseSchema = z
  .object({
    stack_id: uuid(),
    overall_status: z.enum(HEALTH_STATUSES),
    deployment_objects: z.array(
      z
        .object({
          id: uuid(),
          status: z.enum(HEALTH_STATUSES),
          healthy_agents: z.number().int(),
          degraded_agents: z.number().int(),
          failing_agents: z.number().int(),
        })
        .meta({ id: 'DeploymentObjectHealthSummary' }),
    ),
  })
  .meta({ id: 'StackHealthResponse' });
