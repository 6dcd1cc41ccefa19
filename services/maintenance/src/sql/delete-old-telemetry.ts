import type { TaskClient } from './queryable.ts';

/** Brokkr's hard-coded telemetry ceiling (6 h): no setting raises it. */
export const TELEMETRY_RETENTION_SECONDS = 21_600;

/**
 * Telemetry eviction: hard-deletes up to `limit` rows of one table (Kubernetes events or pod log
 * lines streamed by agents) ingested more than 6 hours ago. The api never serves older rows
 * anyway; this keeps the tables bounded.
 */
export async function deleteOldTelemetry(db: TaskClient, table: 'agent_k8s_events' | 'agent_pod_logs', limit: number): Promise<number> {
  const result = await db.query(
    `WITH doomed AS (
       SELECT id FROM ${table} WHERE created_at < now() - make_interval(secs => $1) LIMIT $2
     )
     DELETE FROM ${table} t USING doomed WHERE t.id = doomed.id`,
    [TELEMETRY_RETENTION_SECONDS, limit],
  );
  return result.rowCount ?? 0;
}
