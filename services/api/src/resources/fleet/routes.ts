import { agentNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fleetRecords } from '../../feeds/fleet/fleet-record.ts';
import { fleetAgentRecordSchema, fleetQuerySchema, fleetStatusSchema } from './schemas.ts';
import { recentAgentEvents } from './sql/queries.ts';

const tags = ['fleet'];

/**
 * The fleet view: one FleetAgentRecord per live agent, computed per request.
 * `ws_connected` is true when the agent holds a live-channel socket on any api replica.
 */
export const fleetRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/fleet',
    summary: 'Every live agent with its connection, backlog and health counts',
    description: '`pak_id` keeps the agents registered with that generator (an unknown id gives `[]`).',
    tags,
    access: 'admin',
    query: fleetQuerySchema,
    responses: { 200: { description: 'One record per live agent', schema: fleetAgentRecordSchema.array() } },
    async handler({ query, ctx }) {
      const filter = query.pak_id ? { generatorId: query.pak_id } : {};
      return json(200, await fleetRecords(ctx.db.pool, ctx.feeds.fleet.presence, filter));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/fleet-status',
    summary: "One agent's fleet record and its 20 newest events",
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The record and recent events', schema: fleetStatusSchema } },
    errors: [agentNotFound],
    async handler({ params, ctx }) {
      const [record] = await fleetRecords(ctx.db.pool, ctx.feeds.fleet.presence, { agentIds: [params.id] });
      if (!record) throw agentNotFound();
      return json(200, { record, recent_events: await recentAgentEvents(ctx.db.pool, params.id) });
    },
  }),
];
