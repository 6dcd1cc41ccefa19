import type { RolloutPolicy, RolloutStatus } from '@brokkr/contracts';

export type { Preview, PreviewSummary, RolloutPolicy, RolloutStatus, StackTemplate } from '@brokkr/contracts';

/** The hub's wire shapes, as far as the CLI reads them (extra fields pass through to -o json|yaml); shapes @brokkr/contracts declares are imported from it. */
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

/** One wave of a rollout as GET /stacks/{id}/rollouts reports it (docs/rollouts.md). */
export interface RolloutWaveStatus {
  index: number;
  name: string;
  released: boolean;
  agents: number;
  applied: number;
  healthy: number;
  failed: number;
}

export interface Rollout {
  id: string;
  stack_id: string;
  /** Only in the fleet-wide list (GET /rollouts). */
  stack_name?: string;
  deployment_object_id: string;
  baseline_object_id: string;
  status: RolloutStatus;
  released_wave: number;
  message: string | null;
  policy: RolloutPolicy;
  waves: RolloutWaveStatus[];
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface StackRolloutPolicy {
  stack_id: string;
  policy: RolloutPolicy;
  created_at: string;
  updated_at: string;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
