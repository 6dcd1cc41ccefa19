import { z } from 'zod';
import { HEALTH_STATUSES } from '@brokkr/contracts';
import { timestamp, uuid } from '../../http/schemas.ts';

export const deploymentHealthSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    deployment_object_id: uuid(),
    status: z.string(),
    summary: z.string().nullable().describe('JSON-encoded HealthSummary'),
    checked_at: timestamp(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'DeploymentHealth' });

export const deploymentObjectHealthResponseSchema = z
  .object({
    deployment_object_id: uuid(),
    health_records: z.array(deploymentHealthSchema),
    overall_status: z.enum(HEALTH_STATUSES),
  })
  .meta({ id: 'DeploymentHealthResponse' });

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
