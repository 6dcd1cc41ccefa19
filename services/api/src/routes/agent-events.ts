import { errorKind } from '../http/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import { findAgentEvent, listAllAgentEvents } from './agents-events-sql.ts';
import { agentEventSchema } from './agents-schemas.ts';

const tags = ['agent-events'];
const eventNotFound = errorKind(404, 'agent_event_not_found', 'Agent event not found');

/** The fleet-wide event log (admin only; Brokkr's `pak_id` tenant filter is not implemented). */
export const agentEventRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agent-events',
    summary: 'List every live agent event (newest first)',
    tags,
    access: 'admin',
    responses: { 200: { description: 'Events', schema: agentEventSchema.array() } },
    handler: async ({ ctx }) => json(200, await listAllAgentEvents(ctx.db.pool)),
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
