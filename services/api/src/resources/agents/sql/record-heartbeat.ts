import type { ClusterFacts } from '@brokkr/contracts';
import { prepared, type Queryable } from '@brokkr/db';

export interface K8sReport {
  reachable: boolean;
  latencyMs: number | null;
}

// Prepared: every agent sends one every few seconds.
const plainStatement = prepared('brokkr_agent_heartbeat', 'UPDATE agents SET last_heartbeat = now() WHERE id = $1 AND deleted_at IS NULL');
const reportStatement = prepared(
  'brokkr_agent_heartbeat_k8s',
  `UPDATE agents SET last_heartbeat = now(), k8s_reachable = $2, k8s_api_latency_ms = $3, k8s_reported_at = now()
    WHERE id = $1 AND deleted_at IS NULL`,
);

/** Stamps last_heartbeat, and the Kubernetes report when the agent sent one. */
export async function recordHeartbeat(db: Queryable, id: string, k8s: K8sReport | undefined): Promise<void> {
  await db.query(k8s ? reportStatement([id, k8s.reachable, k8s.latencyMs]) : plainStatement([id]));
}

/** Stores the facts the agent reported; true when they differ from what was stored (rare: agents send them when they change). */
export async function recordClusterFacts(db: Queryable, id: string, facts: ClusterFacts): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE agents SET facts = $2 WHERE id = $1 AND deleted_at IS NULL AND facts IS DISTINCT FROM $2::jsonb',
    [id, JSON.stringify(facts)],
  );
  return (rowCount ?? 0) > 0;
}
