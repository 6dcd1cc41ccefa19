import type { Queryable } from '@brokkr/db';

/** True when there was a policy. A running rollout goes on under the policy it started with. */
export async function deletePolicy(db: Queryable, stackId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM rollout_policies WHERE stack_id = $1', [stackId]);
  return (rowCount ?? 0) > 0;
}
