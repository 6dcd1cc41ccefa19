import type { Queryable } from '@brokkr/db';
import type { FleetAgentRecord } from '@brokkr/contracts';
import type { WsPresence } from './presence.ts';
import { queryFleetRows, type FleetRow } from './sql/fleet-records.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A database row plus the WebSocket presence, in Brokkr's key order. */
export function toRecord(row: FleetRow, presence: WsPresence): FleetAgentRecord {
  const since = presence.connectedSince(row.agent_id);
  return {
    agent_id: row.agent_id,
    name: row.name,
    cluster_name: row.cluster_name,
    status: row.status,
    ws_connected: since !== null,
    connected_since: iso(since),
    last_heartbeat: iso(row.last_heartbeat),
    heartbeat_age_seconds: row.heartbeat_age_seconds,
    pending_object_count: row.pending_object_count,
    pending_work_orders: row.pending_work_orders,
    claimed_work_orders: row.claimed_work_orders,
    last_event_at: iso(row.last_event_at),
    seconds_since_last_event: row.seconds_since_last_event,
    health_failing: row.health_failing,
    health_degraded: row.health_degraded,
    k8s_reachable: row.k8s_reachable,
    k8s_api_latency_ms: row.k8s_api_latency_ms,
  };
}

export async function fleetRecords(db: Queryable, presence: WsPresence, filter: { agentIds?: string[]; generatorId?: string } = {}) {
  return (await queryFleetRows(db, filter)).map((row) => toRecord(row, presence));
}

/** The sweep's change detector (Brokkr: pending, work orders and health only; heartbeats and status never trigger it). */
export const sweepKey = (r: FleetAgentRecord) =>
  `${r.pending_object_count}/${r.pending_work_orders}/${r.claimed_work_orders}/${r.health_failing}/${r.health_degraded}`;
