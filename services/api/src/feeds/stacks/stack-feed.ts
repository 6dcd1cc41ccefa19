import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { TelemetryFrame } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { Subscription } from '@nats-io/transport-node';
import type { WebSocket } from 'ws';
import type { Identity } from '../../auth/identity.ts';
import { closeSocket } from '../../sockets/close-socket.ts';
import { ConsumerSocket } from '../../sockets/consumer-socket.ts';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const FLUSH_TIMEOUT_MS = 2000;

/** Brokkr's lag marker for a per-stack subscriber that fell behind. */
const lagMarker = (stackId: string) => (skipped: number, since: string) =>
  JSON.stringify({
    type: 'log_gap',
    body: { agent_id: NIL_UUID, stack_id: stackId, since_ts: since, dropped_count: skipped, reason: 'buffer_full' },
  });

/**
 * The per-stack live tails of this api replica. A frame ingested on any replica is published on
 * core NATS `brokkr.live.stack.<id>`; a replica subscribes to that subject while it has at least
 * one subscriber for the stack and forwards each frame, unchanged, to every local socket. No
 * backlog, no snapshot: history is GET /stacks/{id}/events and /logs.
 */
export class StackFeed {
  // `pending`: handshakes between listen() and add()/abandon(), which keep the subscription alive.
  // Each socket keeps the identity it was accepted for, so an owner change can be re-checked.
  private readonly stacks = new Map<string, { sockets: Map<ConsumerSocket, Identity>; sub: Subscription; pending: number }>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly logger: Logger,
  ) {}

  /** Sum of subscribers over every stack (`live_subscribers` of GET /admin/ws/connections). */
  get subscriberCount(): number {
    let n = 0;
    for (const s of this.stacks.values()) n += s.sockets.size;
    return n;
  }

  /** Fans a frame out to every replica's subscribers of its stack (including this one's, through NATS). */
  publish(frame: TelemetryFrame): void {
    try {
      publishCore(this.nc, SUBJECTS.liveStack(frame.body.stack_id), frame);
    } catch (err) {
      this.logger.debug({ err }, 'live telemetry frame not published');
    }
  }

  /**
   * Makes sure this replica listens to the stack's subject, and waits (bounded) until NATS has
   * confirmed it: call before completing the handshake, so every frame ingested after the client
   * sees 101 reaches it. Pair with `add` or, if the handshake fails, `abandon`.
   */
  async listen(stackId: string): Promise<void> {
    if (!this.stacks.has(stackId)) {
      const sockets = new Map<ConsumerSocket, Identity>();
      const sub = this.nc.subscribe(SUBJECTS.liveStack(stackId), {
        callback: (err, msg) => {
          if (err) return;
          const text = msg.string();
          for (const s of sockets.keys()) s.send(text);
        },
      });
      this.stacks.set(stackId, { sockets, sub, pending: 0 });
    }
    this.stacks.get(stackId)!.pending += 1;
    await Promise.race([this.nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
      this.logger.warn({ err, stackId }, 'live stack subscription not confirmed'),
    );
  }

  /** Subscribes an accepted socket (after `listen`) of `identity`; it leaves when it closes. */
  add(stackId: string, ws: WebSocket, identity: Identity): void {
    const entry = this.stacks.get(stackId);
    if (!entry) throw new Error(`listen(${stackId}) must precede add`);
    const socket = new ConsumerSocket(ws, lagMarker(stackId));
    entry.pending -= 1;
    entry.sockets.set(socket, identity);
    socket.onClose(() => {
      entry.sockets.delete(socket);
      this.release(stackId);
    });
  }

  /** The stacks this replica has subscribers for. */
  heldStacks(): string[] {
    return [...this.stacks.keys()];
  }

  /** Closes the stack's sockets whose identity may no longer watch it (after an owner change or deletion). */
  closeUnless(stackId: string, mayWatch: (identity: Identity) => boolean): number {
    const entry = this.stacks.get(stackId);
    if (!entry) return 0;
    const refused = [...entry.sockets].filter(([, identity]) => !mayWatch(identity));
    for (const [socket] of refused) closeSocket(socket.ws);
    return refused.length;
  }

  /** The handshake after `listen` did not complete. */
  abandon(stackId: string): void {
    const entry = this.stacks.get(stackId);
    if (entry) entry.pending -= 1;
    this.release(stackId);
  }

  /** Stops listening to the stack once nobody on this replica does. */
  private release(stackId: string): void {
    const entry = this.stacks.get(stackId);
    if (entry && entry.sockets.size === 0 && entry.pending === 0) {
      this.stacks.delete(stackId);
      entry.sub.unsubscribe();
    }
  }
}
