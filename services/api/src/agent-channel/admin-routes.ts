import { z } from 'zod';
import { defineRoute, json, type AnyRoute } from '../http/route.ts';
import { timestamp, uuid } from '../http/schemas.ts';

const connectionsSchema = z
  .object({
    connected_agents: z.number().int(),
    connections: z.array(
      z.object({
        agent_id: uuid(),
        connected_since: timestamp(),
        messages_in: z.number().int(),
        messages_out: z.number().int(),
      }),
    ),
    live_subscribers: z.number().int(),
  })
  .meta({ id: 'WsConnections' });

/** Brokkr's snapshot of this replica's agent sockets. */
export const liveAdminRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/admin/ws/connections',
    summary: "This replica's agent WebSocket connections and live subscribers",
    description:
      'A snapshot of the replica that answers: `messages_in` counts decoded uplink frames, `messages_out` frames written to the agent. ' +
      '`live_subscribers` counts per-stack live subscribers (fleet subscribers excluded) and sets `brokkr_ws_live_subscribers`.',
    tags: ['admin'],
    access: 'admin',
    responses: { 200: { description: 'Connections', schema: connectionsSchema } },
    handler({ ctx }) {
      const connections = ctx.agentSockets.snapshot();
      const liveSubscribers = ctx.agentSockets.liveSubscriberCount?.() ?? 0;
      ctx.agentSockets.metrics.liveSubscribers.set(liveSubscribers);
      return Promise.resolve(json(200, { connected_agents: connections.length, connections, live_subscribers: liveSubscribers }));
    },
  }),
];
