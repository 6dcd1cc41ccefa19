import { z } from 'zod';
import { timestamp, uuid } from '../../http/schemas.ts';

export const HEALTH_STATUSES = ['healthy', 'degraded', 'failing', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const resourceHealthSchema = z
  .object({
    kind: z.string(),
    name: z.string(),
    namespace: z.string(),
    ready: z.boolean(),
    message: z.string().nullable().optional(),
  })
  .meta({ id: 'ResourceHealth' });

export const healthSummarySchema = z
  .object({
    pods_ready: z.number().int().min(-2147483648).max(2147483647),
    pods_total: z.number().int().min(-2147483648).max(2147483647),
    conditions: z.array(z.string()),
    resources: z.array(resourceHealthSchema).nullable().optional(),
  })
  .meta({ id: 'HealthSummary' });

/**
 * `status` is any string here on purpose: an unknown value must reject the whole batch with
 * 422 `invalid_health_record` (Brokkr's code), not the generic body-validation error.
 */
export const healthUpdateSchema = z
  .object({
    deployment_objects: z.array(
      z
        .object({
          id: uuid(),
          status: z.string(),
          summary: healthSummarySchema.nullable().optional(),
          checked_at: z.iso.datetime({ offset: true }),
        })
        .meta({ id: 'DeploymentObjectHealthUpdate' }),
    ),
  })
  .meta({ id: 'HealthStatusUpdate' });
export type HealthUpdate = z.output<typeof healthUpdateSchema>;

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
