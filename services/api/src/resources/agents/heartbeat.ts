import type { ApiContext } from '../../context.ts';
import { announceFleetChange } from './announce-fleet-change.ts';
import { recordHeartbeat, type K8sReport } from './sql/record-heartbeat.ts';

export type { K8sReport };

/**
 * What a heartbeat entails, whichever way it arrived (REST `POST /agents/{id}/heartbeat` or a
 * `heartbeat` frame on the WebSocket channel). Hook further heartbeat effects here so both paths
 * get them (Brokkr's WS heartbeat skips some of the REST ones; we do not).
 */
export async function acceptHeartbeat(ctx: ApiContext, agentId: string, k8s: K8sReport | undefined): Promise<void> {
  await recordHeartbeat(ctx.db.pool, agentId, k8s);
  // /fleet/live subscribers on every replica get the agent's new record (Brokkr: REST heartbeats only).
  announceFleetChange(ctx, agentId);
}
