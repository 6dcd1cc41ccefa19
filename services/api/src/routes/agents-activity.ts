import { generatePak } from '@brokkr/pak';
import type { RawBody } from '../http/body.ts';
import { foreignKeyViolation } from '../http/db-errors.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { queryAgentStacks } from '../targeting/index.ts';
import { agentNotFound, requireAdminOrSelf, requireSelf } from './agents-access.ts';
import { insertAgentEvent, listAgentEvents } from './agents-events-sql.ts';
import { requireSameAgent } from './agents-metadata.ts';
import { agentEventSchema, heartbeatSchema, newAgentEventSchema, rotateAgentPakResponseSchema } from './agents-schemas.ts';
import { recordHeartbeat, rotateAgentPak, type K8sReport } from './agents-sql.ts';
import { stackSchema } from '../resources/stacks/schemas.ts';

const tags = ['agents'];

/** Brokkr ignores a missing or unparsable heartbeat body instead of rejecting the heartbeat. */
function k8sReport(raw: RawBody | undefined): K8sReport | undefined {
  if (!raw || raw.bytes.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const body = heartbeatSchema.safeParse(parsed);
  if (!body.success || typeof body.data.k8s_reachable !== 'boolean') return undefined;
  return { reachable: body.data.k8s_reachable, latencyMs: body.data.k8s_api_latency_ms ?? null };
}

export const agentActivityRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/agents/:id/heartbeat',
    summary: 'Record a heartbeat (the agent itself only)',
    tags,
    access: 'any',
    params: idParams,
    body: heartbeatSchema,
    bodyMode: 'raw',
    responses: { 204: { description: 'Recorded' } },
    errors: [requireSelf],
    async handler({ params, raw, identity, ctx }) {
      requireSelf(identity, params.id);
      await recordHeartbeat(ctx.db.pool, params.id, k8sReport(raw));
      return noContent();
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/events',
    summary: "List an agent's events (newest first)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Events', schema: agentEventSchema.array() } },
    errors: [requireAdminOrSelf],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      return json(200, await listAgentEvents(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/events',
    summary: 'Report the outcome of applying a deployment object',
    description: 'Emits `deployment.applied` when the status is SUCCESS (any case), else `deployment.failed`.',
    tags,
    access: 'any',
    params: idParams,
    body: newAgentEventSchema,
    responses: { 201: { description: 'The event', schema: agentEventSchema } },
    // An unknown deployment object breaks the events → deployment_objects reference.
    errors: [requireAdminOrSelf, requireSameAgent, foreignKeyViolation],
    async handler({ params, body, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      requireSameAgent(params.id, body.agent_id);
      const event = await ctx.transact(async (tx) => {
        const { stack_id, ...row } = await insertAgentEvent(tx.client, {
          agentId: params.id,
          deploymentObjectId: body.deployment_object_id,
          eventType: body.event_type,
          status: body.status,
          message: body.message ?? null,
        });
        tx.emit(row.status.toUpperCase() === 'SUCCESS' ? 'deployment.applied' : 'deployment.failed', {
          agent_event_id: row.id,
          agent_id: row.agent_id,
          deployment_object_id: row.deployment_object_id,
          stack_id,
          event_type: row.event_type,
          status: row.status,
          message: row.message,
          created_at: row.created_at.toISOString(),
        });
        // The incremental target state drops what the agent applied (or acknowledged).
        tx.notifyAgents([params.id]);
        return row;
      });
      return json(201, event);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/stacks',
    summary: 'The stacks associated with an agent (labels, annotations, targets), sorted by id',
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'Stacks', schema: stackSchema.array() } },
    errors: [requireAdminOrSelf],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      return json(200, await queryAgentStacks(ctx.db.pool, params.id));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/rotate-pak',
    summary: "Replace an agent's PAK (the old one stops working on every replica at once)",
    tags,
    access: 'any',
    params: idParams,
    responses: { 200: { description: 'The agent and its new PAK', schema: rotateAgentPakResponseSchema } },
    errors: [requireAdminOrSelf, agentNotFound],
    async handler({ params, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      const { pak, hash } = generatePak();
      const rotated = await ctx.transact(async (tx) => {
        const result = await rotateAgentPak(tx.client, params.id, hash);
        if (result) tx.afterCommit(() => ctx.auth.invalidate([result.oldHash]));
        return result;
      });
      if (!rotated) throw agentNotFound();
      const { agent } = rotated;
      await ctx.audit({ actor: identity, action: 'pak.rotated', resourceType: 'agent', resourceId: agent.id, details: { agent_name: agent.name } });
      return json(200, { agent, pak });
    },
  }),
];
