/** The hub's wire shapes, as far as the CLI reads them (contract §2; extra fields pass through to -o json|yaml). */
export interface Agent {
  id: string;
  name: string;
  cluster_name: string;
  status: string;
  last_heartbeat: string | null;
  k8s_reachable: boolean | null;
  created_at: string;
}

export interface Stack {
  id: string;
  name: string;
  description: string | null;
  generator_id: string;
  created_at: string;
}

export interface DeploymentObject {
  id: string;
  stack_id: string;
  sequence_id: number;
  yaml_content: string;
  yaml_checksum: string;
  is_deletion_marker: boolean;
  submitted_at: string;
  created_at: string;
}

export interface AgentEvent {
  id: string;
  agent_id: string;
  deployment_object_id: string;
  event_type: string;
  status: string;
  message: string | null;
  created_at: string;
}

export interface HealthRecord {
  agent_id: string;
  deployment_object_id: string;
  status: string;
  checked_at: string;
}

export interface WorkOrder {
  id: string;
  work_type: string;
  status: string;
  claimed_by: string | null;
  retry_count: number;
  max_retries: number;
  created_at: string;
  last_error: string | null;
}

export interface Generator {
  id: string;
  name: string;
}

export interface AuthPayload {
  admin: boolean;
  agent: string | null;
  generator: string | null;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
