import type { WebSocket, RawData } from 'ws';
import type { Logger } from '@brokkr/logger';
import type { LiveMetrics } from '../delivery/agent-sockets/metrics.ts';
import { encodeFrame } from '@brokkr/contracts';
import { decodeFrame, type ControlUplinkType, type TelemetryUplinkType } from './frames.ts';
import { BoundedQueue, SerialWorker } from './lanes.ts';

/** Lane sizes: control 64, telemetry 1024; inbound as the agent's own lanes. */
const CONTROL_OUT = 64;
const TELEMETRY_OUT = 1024;
const CONTROL_IN = 256;
const TELEMETRY_IN = 1024;
/** Frames handed to the socket and not yet written out: a consumer that stops reading holds at most these. */
const MAX_IN_FLIGHT = 8;

interface Outgoing {
  type: string;
  text: string;
}

export interface ConnectionHandlers {
  control(type: ControlUplinkType, body: unknown): Promise<void>;
  telemetry(type: TelemetryUplinkType, body: unknown): Promise<void>;
}

/**
 * One agent's socket on this replica. Outbound: two bounded lanes, control always written first;
 * a full lane drops the frame (hints are lossy: the agent's poll catches up). Inbound: control
 * uplinks (heartbeat, event, health) and telemetry are queued and handled separately, each in
 * arrival order, so a burst of log lines never delays a heartbeat (Brokkr's reader does).
 */
export class AgentConnection {
  readonly connectedSince = new Date();
  messagesIn = 0;
  messagesOut = 0;
  private readonly controlOut = new BoundedQueue<Outgoing>(CONTROL_OUT);
  private readonly telemetryOut = new BoundedQueue<Outgoing>(TELEMETRY_OUT);
  private inFlight = 0;
  private readonly controlIn: SerialWorker<{ type: ControlUplinkType; body: unknown }>;
  private readonly telemetryIn: SerialWorker<{ type: TelemetryUplinkType; body: unknown }>;

  readonly agentId: string;
  readonly ws: WebSocket;
  /** The agent asked for `target_state_patch` frames (our agent does; Brokkr's does not). */
  readonly takesPatches: boolean;
  /** The agent checks signatures: patches carry them, trust-metadata notices reach it (agent-sockets/socket.ts). */
  readonly takesSignatures: boolean;
  private readonly metrics: LiveMetrics;
  private readonly logger: Logger;

  constructor(options: {
    agentId: string;
    ws: WebSocket;
    takesPatches?: boolean;
    takesSignatures?: boolean;
    metrics: LiveMetrics;
    logger: Logger;
    handlers: ConnectionHandlers;
  }) {
    const { handlers, ws } = options;
    this.agentId = options.agentId;
    this.takesPatches = options.takesPatches ?? false;
    this.takesSignatures = options.takesSignatures ?? false;
    this.ws = ws;
    this.metrics = options.metrics;
    this.logger = options.logger;
    this.controlIn = new SerialWorker(new BoundedQueue(CONTROL_IN), (f) => this.guard(f.type, () => handlers.control(f.type, f.body)));
    this.telemetryIn = new SerialWorker(new BoundedQueue(TELEMETRY_IN), (f) =>
      this.guard(f.type, () => handlers.telemetry(f.type, f.body)),
    );
    ws.on('message', (data, isBinary) => this.receive(data, isBinary));
  }

  /** Queues a frame; false when the lane is full or the socket is closing (the frame is dropped). */
  send(lane: 'control' | 'telemetry', type: string, body: unknown, options: { coalesce?: boolean } = {}): boolean {
    return this.sendEncoded(lane, type, () => encodeFrame(type, body), options);
  }

  /** As send(), with the frame's text (`{"type","body"}`) already built, e.g. from parts shared by many agents. */
  sendEncoded(lane: 'control' | 'telemetry', type: string, text: string | (() => string), options: { coalesce?: boolean } = {}): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false;
    const queue = lane === 'control' ? this.controlOut : this.telemetryOut;
    // A second identical hint waiting behind the first would tell the agent nothing new.
    if (options.coalesce && queue.some((f) => f.type === type)) return true;
    if (!queue.push({ type, text: typeof text === 'string' ? text : text() })) {
      this.metrics.dropped.inc({ direction: 'out', lane });
      this.logger.debug({ agentId: this.agentId, type, lane }, 'agent channel lane full: frame dropped (the next poll catches up)');
      return false;
    }
    this.pump();
    return true;
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.ws.readyState === this.ws.OPEN) {
      const next = this.controlOut.shift() ?? this.telemetryOut.shift();
      if (!next) return;
      this.inFlight++;
      this.ws.send(next.text, (err) => {
        this.inFlight--;
        if (!err) {
          this.messagesOut++;
          this.metrics.messages.inc({ direction: 'out', type: next.type });
        }
        this.pump();
      });
    }
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (isBinary) return void this.logger.debug({ agentId: this.agentId }, 'binary frame ignored');
    const frame = decodeFrame(data.toString());
    if (!frame) {
      this.metrics.dropped.inc({ direction: 'in', lane: 'decode' });
      this.logger.warn({ agentId: this.agentId }, 'undecodable agent-channel frame dropped');
      return;
    }
    this.messagesIn++;
    this.metrics.messages.inc({ direction: 'in', type: frame.type });
    const accepted =
      frame.lane === 'control'
        ? this.controlIn.offer({ type: frame.type, body: frame.body })
        : frame.lane === 'telemetry'
          ? this.telemetryIn.offer({ type: frame.type, body: frame.body })
          : true;
    if (!accepted) this.metrics.dropped.inc({ direction: 'in', lane: frame.lane });
  }

  private async guard(type: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.logger.warn({ err, agentId: this.agentId, type }, 'agent-channel frame not recorded');
    }
  }
}
