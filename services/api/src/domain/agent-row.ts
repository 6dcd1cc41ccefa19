/** An agents row as the API serializes it (never pak_hash). */
export interface AgentRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  name: string;
  cluster_name: string;
  last_heartbeat: Date | null;
  status: string;
  k8s_reachable: boolean | null;
  k8s_api_latency_ms: number | null;
  k8s_reported_at: Date | null;
}

export const AGENT_COLUMNS = `id, created_at, updated_at, deleted_at, name, cluster_name, last_heartbeat, status,
  k8s_reachable, k8s_api_latency_ms, k8s_reported_at`;

/** The same columns qualified with the alias `a`. */
export const A_COLUMNS = AGENT_COLUMNS.split(',')
  .map((c) => `a.${c.trim()}`)
  .join(', ');
