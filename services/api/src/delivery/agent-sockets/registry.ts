import { TRUST_METADATA_CHANGED } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { closeSocket } from '../../sockets/close-socket.ts';
import type { LazyNotice } from '../pipeline.ts';
import type { LiveMetrics } from './metrics.ts';
import { HintSender } from './hints.ts';
import type { AgentSocket, ConnectionSnapshot } from './socket.ts';
import type { StepSource } from './steps.ts';

/**
 * The agent sockets held by this replica, one per agent (a second upgrade replaces the first, as
 * in Brokkr): the delivery's third stage (pipeline.ts). Hints reach an agent through the replica
 * that holds its socket: every replica hears every notice and sends the ones for its own sockets.
 */
export class AgentSockets {
  private readonly byAgent = new Map<string, AgentSocket>();
  private readonly listeners = new Set<(agentId: string, connected: boolean) => void>();
  private readonly hints: HintSender;
  /** Set by the live-consumer module: per-stack live subscribers of this replica (GET /admin/ws/connections). */
  liveSubscriberCount: (() => number) | undefined;

  constructor(
    readonly metrics: LiveMetrics,
    db: Queryable,
    private readonly logger: Logger,
    steps: StepSource,
  ) {
    this.hints = new HintSender(db, logger, steps);
  }

  register(connection: AgentSocket): void {
    const previous = this.byAgent.get(connection.agentId);
    this.byAgent.set(connection.agentId, connection);
    this.metrics.connectedAgents.inc();
    connection.ws.once('close', () => {
      this.metrics.connectedAgents.dec();
      if (this.byAgent.get(connection.agentId) !== connection) return;
      this.byAgent.delete(connection.agentId);
      this.emit(connection.agentId, false);
    });
    if (previous) closeSocket(previous.ws);
    this.emit(connection.agentId, true);
  }

  get(agentId: string): AgentSocket | undefined {
    return this.byAgent.get(agentId.toLowerCase());
  }

  /** A notice for the agent: a hint or patch frame if its socket is here. */
  noticed(agentId: string, notice: LazyNotice): void {
    const connection = this.byAgent.get(agentId);
    if (connection) this.hints.deliver(connection, notice());
  }

  /** The trust metadata changed (PUT /trust-metadata on any replica): every agent here that checks signatures reads it now. */
  trustMetadataChanged(): void {
    for (const connection of this.byAgent.values())
      if (connection.takesSignatures) connection.send('control', TRUST_METADATA_CHANGED, {}, { coalesce: true });
  }

  connectedSince(agentId: string): Date | undefined {
    return this.get(agentId)?.connectedSince;
  }

  get size(): number {
    return this.byAgent.size;
  }

  snapshot(): ConnectionSnapshot[] {
    return [...this.byAgent.values()].map((c) => ({
      agent_id: c.agentId,
      connected_since: c.connectedSince,
      messages_in: c.messagesIn,
      messages_out: c.messagesOut,
    }));
  }

  /** Called after a socket is registered (true) or after it ended (false); for fleet pushes. */
  onChange(listener: (agentId: string, connected: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(agentId: string, connected: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(agentId, connected);
      } catch (err) {
        this.logger.warn({ err }, 'agent connection listener failed');
      }
    }
  }
}
