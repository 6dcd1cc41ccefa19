import type { DriftPolicy } from '@brokkr/contracts';

export interface DriftPolicyRow {
  stack_id: string;
  policy: DriftPolicy;
  created_at: Date | null;
  updated_at: Date | null;
}
