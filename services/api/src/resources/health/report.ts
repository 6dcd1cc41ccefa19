import { HEALTH_STATUSES, type HealthUpdate } from '@brokkr/contracts';
import type { ApiContext } from '../../context.ts';
import { errorKind } from '../../errors/api-error.ts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import { dependencyWatchers } from '../../domain/stack-dependencies.ts';
import { upsertHealth, type HealthInput } from './sql/record-health.ts';

const isStatus = (s: string) => (HEALTH_STATUSES as readonly string[]).includes(s);
export const invalidHealthRecord = errorKind(422, 'invalid_health_record', 'Invalid health status');

/** Validates the batch as a whole (one bad status rejects it) and keeps the last report per object. */
function healthInputs(body: HealthUpdate): HealthInput[] {
  const bad = body.deployment_objects.find((r) => !isStatus(r.status));
  if (bad) {
    throw invalidHealthRecord.with(`invalid health status '${bad.status}' for deployment object ${bad.id}`, {
      allowed: [...HEALTH_STATUSES],
    });
  }
  const byId = new Map<string, HealthInput>();
  for (const r of body.deployment_objects) {
    byId.set(r.id, {
      deploymentObjectId: r.id,
      status: r.status,
      summary: r.summary ? JSON.stringify(r.summary) : null,
      checkedAt: r.checked_at,
    });
  }
  return [...byId.values()];
}

/**
 * A health report, whichever way it arrived (REST `PATCH /agents/{id}/health-status` or
 * `agent_health` frames on the WebSocket channel): the same validation (an unknown status
 * rejects the batch with 422 `invalid_health_record`) and the same upsert. A batch naming an
 * object the agent is not served stores nothing and gets Brokkr's answer for an unknown object
 * (422 `foreign_key_violation`), so the reporter learns nothing about objects it is not served.
 * An object others wait on (`ready_when: healthy`) that became healthy or stopped being so wakes
 * whom it may concern (dependencyWatchers), so the dependent stack is released or held back.
 */
export async function reportHealth(ctx: Pick<ApiContext, 'db' | 'notifyAgents'>, agentId: string, body: HealthUpdate): Promise<void> {
  const { refused, moved } = await upsertHealth(ctx.db.pool, agentId, healthInputs(body));
  if (refused !== undefined) throw foreignKeyViolation({ constraint: 'deployment_health_deployment_object_id_fkey' });
  if (moved.length > 0) await ctx.notifyAgents(await dependencyWatchers(ctx.db.pool, agentId, moved));
}
