import { z } from 'zod';
import { HEALTH_STATUSES } from './agent-api.ts';
import { timestamp, uuid } from './wire.ts';

/**
 * Deployment health as the hub serves it back: one record per (agent, deployment object), kept
 * from the agents' health reports (agent-api.ts), and their overall status. Clients (the CLI,
 * integrations) read these.
 */

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
export type DeploymentHealth = z.output<typeof deploymentHealthSchema>;

/** GET /deployment-objects/{id}/health. */
export const deploymentObjectHealthResponseSchema = z
  .object({
    deployment_object_id: uuid(),
    health_records: z.array(deploymentHealthSchema),
    overall_status: z.enum(HEALTH_STATUSES),
  })
  .meta({ id: 'DeploymentHealthResponse' });
export type DeploymentObjectHealth = z.output<typeof deploymentObjectHealthResponseSchema>;
