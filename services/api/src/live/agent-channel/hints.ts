import type { AgentNotice } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { AgentConnection } from './connection.ts';
import { NIL_UUID } from './frames.ts';
import { findStackForFrame, findWorkOrderForFrame } from './sql/queries.ts';

/** One row read serves every agent hinted about the same stack or work order within this window. */
const BODY_CACHE_MS = 2000;

/**
 * Turns `brokkr.notify.agent.<id>` notices (the long-poll's wake-ups, heard by every replica) into
 * hint frames for the agent's socket on this replica: `work_order` (with the order) when a work
 * order was created, `stack_changed` (with the stack) when a deployment object was added,
 * otherwise `target_changed` with nil ids (the shape Brokkr uses for a deregistration). The
 * agent's own event reports (`ack`) wake only its long-poll. Bodies are read once per burst.
 */
export class HintSender {
  private readonly bodies = new Map<string, { at: number; body: Promise<unknown> }>();

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
  ) {}

  deliver(connection: AgentConnection, notice: AgentNotice): void {
    if (notice.ack) return;
    const agentId = connection.agentId;
    if (notice.work_order_id) return this.withBody(connection, 'work_order', notice.work_order_id, findWorkOrderForFrame);
    if (notice.stack_id) return this.withBody(connection, 'stack_changed', notice.stack_id, findStackForFrame);
    connection.send('control', 'target_changed', { id: NIL_UUID, agent_id: agentId, stack_id: NIL_UUID }, { coalesce: true });
  }

  private withBody(
    connection: AgentConnection,
    type: 'work_order' | 'stack_changed',
    id: string,
    read: (db: Queryable, id: string) => Promise<unknown>,
  ): void {
    this.body(`${type}:${id}`, () => read(this.db, id)).then(
      (body) => {
        if (body) connection.send('control', type, body);
        else
          connection.send(
            'control',
            'target_changed',
            { id: NIL_UUID, agent_id: connection.agentId, stack_id: NIL_UUID },
            { coalesce: true },
          );
      },
      (err: unknown) => this.logger.warn({ err, type, id }, 'hint body not read: hint not sent (the agent polls)'),
    );
  }

  private body(key: string, read: () => Promise<unknown>): Promise<unknown> {
    const now = Date.now();
    const cached = this.bodies.get(key);
    if (cached && now - cached.at < BODY_CACHE_MS) return cached.body;
    if (this.bodies.size > 1000) for (const [k, v] of this.bodies) if (now - v.at >= BODY_CACHE_MS) this.bodies.delete(k);
    const body = read();
    this.bodies.set(key, { at: now, body });
    return body;
  }
}
