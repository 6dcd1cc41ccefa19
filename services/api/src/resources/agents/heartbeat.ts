import type { ClusterFacts } from '@brokkr/contracts';
import type { ApiContext } from '../../context.ts';
import { announceFleetChange } from './announce-fleet-change.ts';
import { recordClusterFacts, recordHeartbeat, type K8sReport } from './sql/record-heartbeat.ts';

export type { K8sReport };

/** What a heartbeat may say: whether the agent reaches its Kubernetes API, and its cluster's facts (when they changed). */
export interface HeartbeatReport {
  k8s?: K8sReport | undefined;
  facts?: ClusterFacts | undefined;
}

/**
 * What a heartbeat entails, whichever way it arrived (REST `POST /agents/{id}/heartbeat` or a
 * `heartbeat` frame on the WebSocket channel). Hook further heartbeat effects here so both paths
 * get them (Brokkr's WS heartbeat skips some of the REST ones; we do not).
 */
export async function acceptHeartbeat(ctx: ApiContext, agentId: string, report: HeartbeatReport): Promise<void> {
  await recordHeartbeat(ctx.db.pool, agentId, report.k8s);
  // New facts may change what a chart renders for this agent (its Capabilities): the sweep renders it again.
  if (report.facts && (await recordClusterFacts(ctx.db.pool, agentId, report.facts))) ctx.rendering.sweeper.soon();
  // /fleet/live subscribers on every replica get the agent's new record (Brokkr: REST heartbeats only).
  announceFleetChange(ctx, agentId);
}
