import { agentEventSchema, newAgentEventSchema } from '@brokkr/contracts';
import { errorKind } from '../../errors/api-error.ts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { listPage, listPageQuery, pageReply, readWindow } from '../../http/list-page.ts';
import { idParams } from '../../http/schemas.ts';
import { looksLikeBrokkrRustAgent } from '../../compat/brokkr-agent/detect.ts';
import { repeatedSuccess } from '../../compat/brokkr-agent/repeat-event.ts';
import { requireAdminOrSelf, requireSameAgent } from '../../domain/agent-access.ts';
import { findAgentEvent, listAgentEvents, listAllAgentEvents } from './sql/queries.ts';
import { reportAgentEvent } from './report.ts';

const tags = ['agent-events'];
const eventNotFound = errorKind(404, 'agent_event_not_found', 'Agent event not found');

/**
 * What agents report about applying deployment objects: each agent posts and reads its own
 * (`/agents/{id}/events`); the fleet-wide log (`/agent-events`) is admin only (Brokkr's `pak_id`
 * tenant filter is not implemented).
 */
export const agentEventRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/events',
    summary: "List an agent's events (newest first)",
    tags: ['agents'],
    access: 'any',
    params: idParams,
    query: listPageQuery,
    responses: {
      200: { description: 'Events; `limit`/`offset` page it, `Link` rel=next while more follow', schema: agentEventSchema.array() },
    },
    errors: [requireAdminOrSelf],
    async handler({ params, query, identity, ctx, req }) {
      requireAdminOrSelf(identity, params.id);
      const page = listPage(query, ctx.settings.limits.listMaxItems);
      return pageReply(req, page, await listAgentEvents(ctx.db.pool, params.id, readWindow(page)));
    },
  }),

  defineRoute({
    method: 'post',
    path: '/agents/:id/events',
    summary: 'Report the outcome of applying a deployment object',
    description:
      'Emits `deployment.applied` when the status is SUCCESS (any case), `deployment.window_blocked` when it is BLOCKED (a maintenance window holds the object back), else `deployment.failed`.',
    tags: ['agents'],
    access: 'any',
    params: idParams,
    body: newAgentEventSchema,
    responses: { 201: { description: 'The event', schema: agentEventSchema } },
    // An unknown deployment object breaks the events → deployment_objects reference.
    errors: [requireAdminOrSelf, requireSameAgent, foreignKeyViolation],
    async handler({ params, body, identity, ctx, req }) {
      requireAdminOrSelf(identity, params.id);
      requireSameAgent(params.id, body.agent_id);
      // Brokkr's own agent re-reports SUCCESS on every poll of its full target state (compat/brokkr-agent/).
      const repeated = looksLikeBrokkrRustAgent(req.headers)
        ? await repeatedSuccess(ctx.db.pool, params.id, body.deployment_object_id, body.status)
        : undefined;
      if (repeated) return json(201, repeated);
      const event = await reportAgentEvent(ctx, params.id, {
        deploymentObjectId: body.deployment_object_id,
        eventType: body.event_type,
        status: body.status,
        message: body.message ?? null,
      });
      return json(201, event);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agent-events',
    summary: 'List every live agent event (newest first)',
    tags,
    access: 'admin',
    query: listPageQuery,
    responses: {
      200: { description: 'Events; `limit`/`offset` page it, `Link` rel=next while more follow', schema: agentEventSchema.array() },
    },
    async handler({ query, ctx, req }) {
      const page = listPage(query, ctx.settings.limits.listMaxItems);
      return pageReply(req, page, await listAllAgentEvents(ctx.db.pool, readWindow(page)));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agent-events/:id',
    summary: 'Get an agent event',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The event', schema: agentEventSchema } },
    errors: [eventNotFound],
    async handler({ params, ctx }) {
      const event = await findAgentEvent(ctx.db.pool, params.id);
      if (!event) throw eventNotFound();
      return json(200, event);
    },
  }),
];
