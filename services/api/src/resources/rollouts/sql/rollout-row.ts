import type { RolloutPolicy, RolloutStatus } from '@brokkr/contracts';

export interface RolloutRow {
  id: string;
  stack_id: string;
  deployment_object_id: string;
  baseline_object_id: string;
  status: RolloutStatus;
  released_wave: number;
  /** The wave the rollout waits at for approvals (every gate before it passed), or null. */
  approval_wave: number | null;
  message: string | null;
  policy: RolloutPolicy;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export const ROLLOUT_COLUMNS =
  'id, stack_id, deployment_object_id, baseline_object_id, status, released_wave, approval_wave, message, policy, created_at, updated_at, finished_at';

export interface PolicyRow {
  stack_id: string;
  policy: RolloutPolicy;
  created_at: Date;
  updated_at: Date;
}
