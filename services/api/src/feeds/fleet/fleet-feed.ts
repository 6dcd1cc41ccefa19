import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import { fleetNoticeSchema, type FleetNotice } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { Gauge, type Registry } from '@brokkr/telemetry';
import type { WebSocket } from 'ws';
import { ConsumerSocket } from '../../sockets/consumer-socket.ts';
import { fleetRecords, sweepKey } from './fleet-record.ts';
import { WsPresence, type LocalAgentConnections } from './presence.ts';

/** Brokkr's fleet sweep period. */
const SWEEP_INTERVAL_MS = 20_000;
/** Hints about one agent arriving together (a heartbeat and a wake-up) cost one recomputation. */
const COALESCE_MS = 200;

export interface FleetFeedDeps {
  db: Queryable;
  nc: NatsConnection;
  logger: Logger;
  registry: Registry;
  /** This replica's agent-channel registry, once the agent channel exists. */
  local: () => LocalAgentConnections | undefined;
  signal: AbortSignal;
}

/**
 * `/api/v1/fleet/live` on this replica: `fleet_update` frames (a full FleetAgentRecord) when
 *   1/2. an agent's live-channel socket opens or closes (on the replica holding it),
 *   3.   an agent heartbeats, over REST or the channel (Brokkr: REST only),
 *   -    an agent's target state or work may have changed (the hub's `brokkr.notify.agent.<id>`),
 *   4.   the 20 s sweep sees an agent's pending/work/health counts change (or a new agent).
 * 1–3 travel as `brokkr.live.fleet` notices, so every replica's subscribers hear them; each replica
 * that has subscribers computes the record itself. A replica without subscribers only keeps the
 * WebSocket presence up to date (presence.ts) and queries nothing.
 */
export class FleetFeed {
  readonly presence: WsPresence;
  private readonly sockets = new Set<ConsumerSocket>();
  private readonly due = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private baseline: Map<string, string> | undefined;
  private readonly subscribersGauge: Gauge;

  constructor(private readonly deps: FleetFeedDeps) {
    this.presence = new WsPresence(deps.local);
    this.subscribersGauge = new Gauge({
      name: 'brokkr_fleet_live_subscribers',
      help: '/api/v1/fleet/live subscribers on this replica',
      registers: [deps.registry],
    });
  }

  start(): void {
    const { nc, logger, signal } = this.deps;
    nc.subscribe(SUBJECTS.liveFleet, {
      callback: (err, msg) => {
        if (err) return;
        const notice = fleetNoticeSchema.safeParse(safeJson(msg.string()));
        if (notice.success) this.heard(notice.data);
      },
    });
    this.deps.local()?.onChange?.((agentId, connected) => this.announce(agentId, connected ? 'connected' : 'disconnected'));
    const sweep = setInterval(
      () => void this.sweep().catch((err: unknown) => logger.warn({ err }, 'fleet sweep failed')),
      SWEEP_INTERVAL_MS,
    );
    sweep.unref();
    signal.addEventListener('abort', () => {
      clearInterval(sweep);
      clearTimeout(this.flushTimer);
    });
  }

  /** The delivery's fourth stage (pipeline.ts): the agent's target state or work may have changed. */
  noticed(agentId: string): void {
    if (this.sockets.size > 0) this.schedule(agentId);
  }

  get subscriberCount(): number {
    return this.sockets.size;
  }

  /** Tells every replica that this agent's record may have changed (and where its socket is). */
  announce(agentId: string, reason: FleetNotice['reason']): void {
    const since = reason === 'disconnected' ? undefined : this.deps.local()?.connectedSince(agentId);
    const notice: FleetNotice = { agent_id: agentId, reason, ws_connected_since: since ? since.toISOString() : null };
    try {
      publishCore(this.deps.nc, SUBJECTS.liveFleet, notice);
    } catch (err) {
      this.deps.logger.debug({ err, agentId }, 'fleet notice not published');
    }
  }

  add(ws: WebSocket): void {
    const socket = new ConsumerSocket(ws);
    this.sockets.add(socket);
    this.subscribersGauge.inc();
    socket.onClose(() => {
      this.sockets.delete(socket);
      this.subscribersGauge.dec();
      if (this.sockets.size === 0) this.baseline = undefined;
    });
  }

  private heard(notice: FleetNotice): void {
    if (notice.ws_connected_since) this.presence.heard(notice.agent_id, new Date(notice.ws_connected_since));
    else if (notice.reason === 'disconnected' && !this.deps.local()?.connectedSince(notice.agent_id))
      this.presence.heard(notice.agent_id, null);
    if (this.sockets.size > 0) this.schedule(notice.agent_id);
  }

  private schedule(agentId: string): void {
    this.due.add(agentId);
    this.flushTimer ??= setTimeout(() => void this.flush(), COALESCE_MS);
  }

  private async flush(): Promise<void> {
    this.flushTimer = undefined;
    const agentIds = [...this.due];
    this.due.clear();
    try {
      // One statement for every agent heard about since the last flush; a deleted agent has no record (nothing pushed, as in Brokkr).
      for (const record of await fleetRecords(this.deps.db, this.presence, { agentIds })) {
        this.baseline?.set(record.agent_id, sweepKey(record));
        this.push(record);
      }
    } catch (err) {
      this.deps.logger.warn({ err, agents: agentIds.length }, 'fleet updates not computed');
    }
  }

  /** Brokkr's sweep, while this replica has subscribers: the first pass only records a baseline. */
  private async sweep(): Promise<void> {
    if (this.sockets.size === 0) return;
    const records = await fleetRecords(this.deps.db, this.presence);
    const previous = this.baseline;
    this.baseline = new Map(records.map((r) => [r.agent_id, sweepKey(r)]));
    if (!previous) return;
    for (const record of records) if (previous.get(record.agent_id) !== sweepKey(record)) this.push(record);
  }

  private push(record: object): void {
    const text = JSON.stringify({ type: 'fleet_update', body: record });
    for (const socket of this.sockets) socket.send(text);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
