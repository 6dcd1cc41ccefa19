import type { Queryable } from '@brokkr/db';

export interface K8sReport {
  reachable: boolean;
  latencyMs: number | null;
}

/** Stamps last_heartbeat, and the Kubernetes report when the agent sent one. */
export async function recordHeartbeat(db: Queryable, id: string, k8s: K8sReport | undefined): Promise<void> {
  if (!k8s) {
    await db.query('UPDATE agents SET last_heartbeat = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
    return;
  }
  await db.query(
    `UPDATE agents SET last_heartbeat = now(), k8s_reachable = $2, k8s_api_latency_ms = $3, k8s_reported_at = now()
      WHERE id = $1 AND deleted_at IS NULL`,
    [id, k8s.reachable, k8s.latencyMs],
  );
}
