import { NIL_UUID, type AgentNotice, type TargetChangedBody } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { AgentSocket } from './socket.ts';
import { findStackForFrame, findWorkOrderForFrame } from './sql/frame-bodies.ts';
import { StepSender, type StepSource } from './steps.ts';

/** One row read serves every agent hinted about the same stack or work order within this window. */
const BODY_CACHE_MS = 2000;

/**
 * Turns `brokkr.notify.agent.<id>` notices (the long-poll's wake-ups, heard by every replica) into
 * frames for the agent's socket on this replica: `work_order` (with the order) when a work order
 * was created; for a new deployment object, `target_state_patch` (the new object itself, steps.ts)
 * to an agent that asked for it and whose answer this replica holds, else `stack_changed` (with
 * the stack); otherwise `target_changed` with nil ids (the shape Brokkr uses for a
 * deregistration). The agent's own event reports (`ack`) wake only its long-poll. Bodies are read
 * once per burst.
 */
export class HintSender {
  private readonly bodies = new Map<string, { at: number; body: Promise<unknown> }>();
  private readonly steps: StepSender;

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    stepSource: StepSource,
  ) {
    this.steps = new StepSender(stepSource, logger);
  }

  deliver(connection: AgentSocket, notice: AgentNotice): void {
    if (notice.ack) return;
    // A signature stored for content already served changes nothing for an agent that does not check them.
    if (notice.signature && !connection.takesSignatures) return;
    if (notice.work_order_id) return this.withBody(connection, 'work_order', notice.work_order_id, findWorkOrderForFrame);
    const stackId = notice.stack_id;
    if (stackId && connection.takesPatches)
      return this.steps.send(connection, () => this.withBody(connection, 'stack_changed', stackId, findStackForFrame));
    if (stackId) return this.withBody(connection, 'stack_changed', stackId, findStackForFrame);
    this.targetChanged(connection);
  }

  private targetChanged(connection: AgentSocket): void {
    const body: TargetChangedBody = { id: NIL_UUID, agent_id: connection.agentId, stack_id: NIL_UUID };
    connection.send('control', 'target_changed', body, { coalesce: true });
  }

  private withBody(
    connection: AgentSocket,
    type: 'work_order' | 'stack_changed',
    id: string,
    read: (db: Queryable, id: string) => Promise<unknown>,
  ): void {
    this.body(`${type}:${id}`, () => read(this.db, id)).then(
      (body) => (body ? connection.send('control', type, body) : this.targetChanged(connection)),
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
