import { AGENT_FEATURES_HEADER, agentFeatures, TARGET_STATE_PATCH_FEATURE, TARGET_STATE_SIGNATURES_FEATURE } from '@brokkr/contracts';
import { ingestTelemetryFrame } from '../resources/cluster-events/ingest.ts';
import type { UpgradeRoute } from '../http/upgrade-route.ts';
import { AgentConnection } from './connection.ts';
import { handleControlUplink } from './uplinks.ts';

/**
 * `/internal/ws/agent`: any non-deleted agent PAK, whatever the agent's
 * status; admin and generator PAKs get 403. Hints go down, heartbeats, events, health and
 * telemetry come up.
 */
export const agentChannelRoutes: UpgradeRoute[] = [
  {
    path: '/internal/ws/agent',
    subprotocolAuth: false,
    // Heartbeats, events, health reports and telemetry lines, one per message.
    maxMessageBytes: (settings) => settings.limits.agentChannelMaxMessageBytes,
    async handle(up) {
      const agentId = up.identity.agent;
      if (!agentId) return up.reject(403);
      // Brokkr's Rust agent dials without a User-Agent; ours (and browsers) send one.
      const agent = { id: agentId, brokkrRustAgent: up.req.headers['user-agent'] === undefined };
      const ws = await up.accept();
      const { ctx } = up;
      const connections = ctx.agentSockets;
      const features = agentFeatures(up.req.headers[AGENT_FEATURES_HEADER]);
      const connection = new AgentConnection({
        agentId,
        ws,
        takesPatches: features.has(TARGET_STATE_PATCH_FEATURE),
        takesSignatures: features.has(TARGET_STATE_SIGNATURES_FEATURE),
        metrics: connections.metrics,
        logger: ctx.logger,
        handlers: {
          control: (type, body) => handleControlUplink(ctx, agent, type, body),
          telemetry: (type, body) => ingestTelemetryFrame(ctx, agentId, type, body),
        },
      });
      ws.on('error', (err) => ctx.logger.debug({ err, agentId }, 'agent socket error'));
      connections.register(connection);
    },
  },
];
