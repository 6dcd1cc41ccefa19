import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import {
  AGENT_FEATURES_HEADER,
  HINT_TYPES,
  TARGET_STATE_PATCH_FEATURE,
  TARGET_STATE_SIGNATURES_FEATURE,
  TRUST_METADATA_CHANGED,
  targetStatePatchSchema,
  type ControlUplink,
  type HintType,
  type TelemetryFrameInput,
} from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import { Lane } from './lane.ts';

export type ChannelState = 'down' | 'up' | 'force-rest' | 'auth-rejected';
/** The frames are @brokkr/contracts' (agent-channel.ts, telemetry.ts). */
export type { HintType } from '@brokkr/contracts';
export type TelemetryFrame = TelemetryFrameInput;
export type ControlFrame = ControlUplink;

export interface AgentChannelOptions {
  url: string;
  pak: string;
  userAgent: string;
  forceRest: boolean;
  /** The agent has a trust policy: it asks for signatures in the patches and for `trust_metadata_changed`. */
  checksSignatures?: boolean;
  logger: Logger;
}

const CONTROL_CAPACITY = 256;
const TELEMETRY_CAPACITY = 1024;
/** Frames handed to the socket and not yet written: a stalled connection holds at most these. */
const MAX_IN_FLIGHT = 16;
/** Brokkr's dial backoff: 1, 2, 4 … 60 s, ±20 %. */
const BACKOFF_MAX_MS = 60_000;
/** After this many 401/403 answers in a row the agent stops dialling (until restarted), as Brokkr's does. */
const MAX_AUTH_REJECTIONS = 5;
/** Ours: a ping every 30 s, and a socket that answered none within the next 30 s is dropped (half-open TCP). */
const PING_INTERVAL_MS = 30_000;

const HINTS = new Set<string>(HINT_TYPES);

/**
 * The agent side of `/internal/ws/agent`. Events: `state` (ChannelState), `hint` (type, body),
 * `patch` (TargetStatePatch: our hub's hint that carries the new objects, asked for at the upgrade;
 * with `checksSignatures`, each object with its signature) and `trust-metadata` (the hub's trust
 * metadata changed: asked for with `checksSignatures`).
 * Two outbound lanes, control (heartbeats, events, health) always written before telemetry; a
 * full lane or a channel that is not up refuses a frame, so the caller falls back to REST
 * (control) or drops it (telemetry has no REST path). Frames queued while the socket is down
 * go out on the next connection.
 */
export class AgentChannel extends EventEmitter {
  private stateValue: ChannelState;
  private socket: WebSocket | undefined;
  private readonly control = new Lane(CONTROL_CAPACITY);
  private readonly telemetry = new Lane(TELEMETRY_CAPACITY);
  private inFlight = 0;
  private stopped = false;
  private failures = 0;
  private authRejections = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AgentChannelOptions) {
    super();
    this.stateValue = options.forceRest ? 'force-rest' : 'down';
  }

  get state(): ChannelState {
    return this.stateValue;
  }

  get up(): boolean {
    return this.stateValue === 'up';
  }

  start(): void {
    if (this.stateValue === 'force-rest') return void this.options.logger.info('agent channel off (WS_FORCE_REST): REST only');
    this.dial();
  }

  /** A control frame; false when the channel is not up or the lane is full (send it over REST instead). */
  sendControl(frame: ControlFrame): boolean {
    return this.enqueue(this.control, frame);
  }

  /** A telemetry frame; false when it was dropped (down or lane full). */
  sendTelemetry(frame: TelemetryFrame): boolean {
    return this.enqueue(this.telemetry, frame);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    // Frames already accepted (the last events of a shutdown) get a moment to go out.
    for (let i = 0; i < 20 && (this.control.length > 0 || this.inFlight > 0); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
      setTimeout(() => (socket.terminate(), resolve()), 1000).unref();
    });
  }

  private enqueue(lane: Lane, frame: { type: string; body: object }): boolean {
    if (!this.up) return false;
    if (!lane.push(frame.type, JSON.stringify(frame))) return false;
    this.pump();
    return true;
  }

  private setState(state: ChannelState): void {
    if (state === this.stateValue) return;
    this.stateValue = state;
    this.options.logger.info({ state }, 'agent channel state');
    this.emit('state', state);
  }

  private pump(): void {
    const socket = this.socket;
    while (socket && socket.readyState === WebSocket.OPEN && this.inFlight < MAX_IN_FLIGHT) {
      const next = this.control.shift() ?? this.telemetry.shift();
      if (!next) return;
      this.inFlight++;
      socket.send(next.text, () => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private dial(): void {
    if (this.stopped) return;
    const { url, pak, userAgent, logger } = this.options;
    const features = [TARGET_STATE_PATCH_FEATURE, ...(this.options.checksSignatures ? [TARGET_STATE_SIGNATURES_FEATURE] : [])];
    const headers = { authorization: `Bearer ${pak}`, 'user-agent': userAgent, [AGENT_FEATURES_HEADER]: features.join(',') };
    const socket = new WebSocket(url, { headers, handshakeTimeout: 10_000 });
    let opened = false;
    let alive = true;
    let pinger: NodeJS.Timeout | undefined;
    socket.on('open', () => {
      opened = true;
      this.socket = socket;
      this.failures = 0;
      this.authRejections = 0;
      this.inFlight = 0;
      pinger = setInterval(() => {
        if (!alive) return void socket.terminate();
        alive = false;
        socket.ping();
      }, PING_INTERVAL_MS).unref();
      this.setState('up');
      this.pump();
    });
    socket.on('pong', () => (alive = true));
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      this.authRejections = status === 401 || status === 403 ? this.authRejections + 1 : 0;
      logger.warn({ status, url }, 'agent channel refused by the broker');
      socket.terminate();
    });
    socket.on('error', (err) => logger.debug({ err: err.message }, 'agent channel error'));
    socket.on('close', () => {
      clearInterval(pinger);
      if (this.socket === socket) this.socket = undefined;
      if (opened) this.failures = 0;
      if (this.stopped) return this.setState('down');
      if (this.authRejections >= MAX_AUTH_REJECTIONS) {
        logger.error({ rejections: this.authRejections }, 'agent channel rejected the PAK repeatedly: REST only until restart');
        return this.setState('auth-rejected');
      }
      this.setState('down');
      this.retryTimer = setTimeout(() => this.dial(), this.backoff()).unref();
    });
  }

  private backoff(): number {
    this.failures++;
    const base = Math.min(BACKOFF_MAX_MS, 1000 * 2 ** (this.failures - 1));
    return base * (0.8 + Math.random() * 0.4);
  }

  private receive(text: string): void {
    let frame: { type?: unknown; body?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    if (typeof frame.type === 'string' && HINTS.has(frame.type) && frame.body !== undefined)
      return void this.emit('hint', frame.type as HintType, frame.body);
    if (frame.type === TRUST_METADATA_CHANGED) return void this.emit('trust-metadata');
    if (frame.type !== 'target_state_patch') return;
    const patch = targetStatePatchSchema.safeParse(frame.body);
    // A patch we cannot read still says the state changed: fetch it.
    if (patch.success) this.emit('patch', patch.data);
    else this.emit('hint', 'stack_changed', frame.body);
  }
}
