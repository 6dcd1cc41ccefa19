import type { Queryable } from '@brokkr/db';
import type { DriftPolicy } from '@brokkr/contracts';
import type { DriftPolicyRow } from './policy-row.ts';

/** Creates or replaces a stack's drift policy (its agents read it with their grants). */
export async function putDriftPolicy(db: Queryable, stackId: string, policy: DriftPolicy): Promise<DriftPolicyRow> {
  const { rows } = await db.query<DriftPolicyRow>(
    `INSERT INTO stack_drift_policies (stack_id, policy) VALUES ($1, $2)
     ON CONFLICT (stack_id) DO UPDATE SET policy = EXCLUDED.policy
     RETURNING stack_id, policy, created_at, updated_at`,
    [stackId, JSON.stringify(policy)],
  );
  return rows[0]!;
}
