import type { AgentNotice } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { closeSocket } from '../../http/close-socket.ts';
import type { LiveMetrics } from '../metrics.ts';
import type { AgentConnection } from './connection.ts';
import { HintSender } from './hints.ts';
import type { StepSource } from './steps.ts';

export interface ConnectionSnapshot {
  agent_id: string;
  connected_since: Date;
  messages_in: number;
  messages_out: number;
}

/**
 * The agent sockets held by this replica, one per agent (a second upgrade replaces the first, as
 * in Brokkr). Hints reach an agent through the replica that holds its socket: every replica hears
 * every `brokkr.notify.agent.*` notice and delivers the ones for its own sockets.
 */
export class AgentConnections {
  private readonly byAgent = new Map<string, AgentConnection>();
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

  register(connection: AgentConnection): void {
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

  get(agentId: string): AgentConnection | undefined {
    return this.byAgent.get(agentId.toLowerCase());
  }

  /** A `brokkr.notify.agent.<id>` notice: a hint frame if the agent's socket is here. */
  notice(notice: AgentNotice): void {
    const connection = this.get(notice.agent_id);
    if (connection) this.hints.deliver(connection, notice);
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

declare module '../../context.ts' {
  interface ApiContext {
    /** The agent WebSockets (`/internal/ws/agent`) this replica holds; hints reach them from the wake-ups. */
    agentConnections: AgentConnections;
  }
}
