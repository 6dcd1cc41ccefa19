/** What this replica's agent sockets (delivery/agent-sockets/registry.ts) tell the fleet view. */
export interface LocalAgentConnections {
  connectedSince(agentId: string): Date | undefined;
  onChange?(listener: (agentId: string, connected: boolean) => void): () => void;
  liveSubscriberCount?: () => number;
}

/** A presence entry not refreshed for this long is forgotten (the agent heartbeats every 10 s over the channel). */
export const PRESENCE_TTL_MS = 60_000;

/**
 * Which agents hold a live-channel socket, on this replica (the registry) or on another one (heard
 * over `brokkr.live.fleet` from the replica holding the socket: on connect, on every heartbeat, and
 * on disconnect). Brokkr answers `ws_connected` from its own process only, so behind a load
 * balancer its fleet view shows most connected agents as disconnected.
 */
export class WsPresence {
  private readonly remote = new Map<string, { since: Date; heardAt: number }>();

  constructor(private readonly local: () => LocalAgentConnections | undefined) {}

  connectedSince(agentId: string, now = Date.now()): Date | null {
    const here = this.local()?.connectedSince(agentId);
    if (here) return here;
    const there = this.remote.get(agentId);
    if (!there) return null;
    if (now - there.heardAt > PRESENCE_TTL_MS) {
      this.remote.delete(agentId);
      return null;
    }
    return there.since;
  }

  /** Another replica holds (since ≠ null) or just lost (null) the agent's socket. */
  heard(agentId: string, since: Date | null, now = Date.now()): void {
    if (since) this.remote.set(agentId, { since, heardAt: now });
    else this.remote.delete(agentId);
  }
}
