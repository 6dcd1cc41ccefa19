import type { Queryable } from '@brokkr/db';
import type { RolloutPolicy } from '@brokkr/contracts';
import type { PolicyRow } from './rollout-row.ts';

/** Creates or replaces a stack's policy; it applies to the stack's next deployment object. */
export async function putPolicy(db: Queryable, stackId: string, policy: RolloutPolicy): Promise<PolicyRow> {
  const { rows } = await db.query<PolicyRow>(
    `INSERT INTO rollout_policies (stack_id, policy) VALUES ($1, $2)
     ON CONFLICT (stack_id) DO UPDATE SET policy = EXCLUDED.policy
     RETURNING stack_id, policy, created_at, updated_at`,
    [stackId, JSON.stringify(policy)],
  );
  return rows[0]!;
}
