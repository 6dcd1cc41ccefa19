import { z } from 'zod';
import { DEPENDENCY_SCOPES, HEALTH_STATUSES, READY_WHEN } from '@brokkr/contracts';
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
    waiting_agents: z
      .array(
        z.object({
          agent_id: uuid(),
          reason: z.literal('dependency'),
          stack_id: uuid().meta({ description: 'The first dependency not ready for the agent' }),
          ready_when: z.enum(READY_WHEN),
          scope: z.enum(DEPENDENCY_SCOPES),
        }),
      )
      .optional()
      .meta({ description: 'Only when some agent waits: the agents not served the stack because a dependency is not ready there' }),
  })
  .meta({ id: 'StackHealthResponse' });
