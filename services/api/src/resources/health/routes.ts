import { healthUpdateSchema } from '@brokkr/contracts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { waitingAgents } from '../../domain/stack-dependencies.ts';
import { overallStatus } from './overall-status.ts';
import { deploymentObjectHealthResponseSchema, stackHealthResponseSchema } from './schemas.ts';
import { healthOfDeploymentObject, healthOfStack, type HealthRow } from './sql/queries.ts';
import { invalidHealthRecord, reportHealth } from './report.ts';

const tags = ['health'];

function stackGroups(rows: HealthRow[]) {
  const groups = new Map<string, HealthRow[]>();
  for (const row of rows) groups.set(row.deployment_object_id, [...(groups.get(row.deployment_object_id) ?? []), row]);
  return [...groups.entries()].map(([id, records]) => ({
    id,
    status: overallStatus(records.map((r) => r.status)),
    healthy_agents: records.filter((r) => r.status === 'healthy').length,
    degraded_agents: records.filter((r) => r.status === 'degraded').length,
    failing_agents: records.filter((r) => r.status === 'failing').length,
  }));
}

export const healthRoutes: AnyRoute[] = [
  defineRoute({
    method: 'patch',
    path: '/agents/:id/health-status',
    summary: 'Report the health of deployment objects (the agent itself or an admin)',
    description:
      'Upserts one record per (agent, deployment object). Any unknown status rejects the whole batch with 422 `invalid_health_record`.',
    tags,
    access: 'any',
    params: idParams,
    body: healthUpdateSchema,
    responses: { 200: { description: 'Recorded (empty body)' } },
    // An unknown deployment object breaks the health → deployment_objects reference.
    errors: [requireAdminOrSelf, invalidHealthRecord, foreignKeyViolation],
    async handler({ params, body, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      await reportHealth(ctx, params.id, body);
      return { status: 200 };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/deployment-objects/:id/health',
    summary: "A deployment object's health as reported by each agent",
    description: 'Newest check first. An unknown id is not a 404: it has no records and status `unknown`.',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'Health records and their overall status', schema: deploymentObjectHealthResponseSchema } },
    async handler({ params, ctx }) {
      const rows = await healthOfDeploymentObject(ctx.db.pool, params.id);
      return json(200, { deployment_object_id: params.id, health_records: rows, overall_status: overallStatus(rows.map((r) => r.status)) });
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/health',
    summary: "A stack's health per deployment object",
    description:
      'Counts the agents reporting each status for every live deployment object of the stack that has health records. ' +
      '`waiting_agents` (only when there are any) lists the agents the stack waits on a dependency for, each with the first dependency not ready there (docs/dependencies.md).',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'Health per deployment object', schema: stackHealthResponseSchema } },
    async handler({ params, ctx }) {
      const [groups, waiting] = await Promise.all([
        healthOfStack(ctx.db.pool, params.id).then(stackGroups),
        waitingAgents(ctx.db.pool, params.id),
      ]);
      const summary = { stack_id: params.id, overall_status: overallStatus(groups.map((g) => g.status)), deployment_objects: groups };
      return json(200, waiting.length > 0 ? { ...summary, waiting_agents: waiting.map((w) => ({ ...w, reason: 'dependency' })) } : summary);
    },
  }),
];
