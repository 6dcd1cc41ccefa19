import { metricsFor, type Registry } from '@brokkr/telemetry';

/** The `brokkr_ws_*` metrics of the agent channel, plus our drop counter. */
export function createLiveMetrics(registry: Registry) {
  const m = metricsFor(registry);
  return {
    connectedAgents: m.gauge({ name: 'brokkr_ws_connected_agents', help: 'Agent WebSocket connections held by this replica' }),
    messages: m.counter({
      name: 'brokkr_ws_messages_total',
      help: 'Agent-channel frames: direction=in every decoded uplink frame, direction=out every frame written to an agent',
      labelNames: ['direction', 'type'] as const,
    }),
    liveSubscribers: m.gauge({
      name: 'brokkr_ws_live_subscribers',
      help: 'Per-stack live subscribers of this replica (set when GET /admin/ws/connections is called, as in Brokkr)',
    }),
    dropped: m.counter({
      name: 'brokkr_ws_frames_dropped_total',
      help: 'Agent-channel frames dropped: a full lane (lane=control|telemetry, direction=out|in) or an undecodable frame (lane=decode)',
      labelNames: ['direction', 'lane'] as const,
    }),
  };
}

export type LiveMetrics = ReturnType<typeof createLiveMetrics>;
