/** The broker's v1 wire shapes the agent reads and writes (snake_case, as on the wire). */

export interface AuthPayload {
  admin: boolean;
  agent: string | null;
  generator: string | null;
  readonly?: boolean;
}

export interface AgentRecord {
  id: string;
  name: string;
  cluster_name: string;
  status: string;
  last_heartbeat: string | null;
}

export interface DeploymentObject {
  id: string;
  sequence_id: number;
  stack_id: string;
  yaml_content: string;
  yaml_checksum: string;
  is_deletion_marker: boolean;
}

/** What the agent did with a deployment object (our event_type values; Brokkr's agent sends DEPLOY). */
export type AgentEventType = 'APPLIED' | 'UPDATED' | 'DELETED';
export type AgentEventStatus = 'SUCCESS' | 'FAILURE';

export interface AgentEventBody {
  agent_id: string;
  deployment_object_id: string;
  event_type: AgentEventType;
  status: AgentEventStatus;
  message: string | null;
}

export interface AgentEventRecord {
  deployment_object_id: string;
  event_type: string;
  status: string;
  created_at: string;
}

export type HealthStatus = 'healthy' | 'degraded' | 'failing' | 'unknown';

export interface HealthResource {
  kind: string;
  name: string;
  namespace: string;
  ready: boolean;
  message?: string;
}

export interface HealthSummary {
  pods_ready: number;
  pods_total: number;
  conditions: string[];
  resources: HealthResource[];
}

export interface HealthRecord {
  id: string;
  status: HealthStatus;
  summary: HealthSummary;
  checked_at: string;
}

export interface HeartbeatBody {
  k8s_reachable: boolean;
  k8s_api_latency_ms: number | null;
}
