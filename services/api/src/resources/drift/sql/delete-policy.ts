import type { Queryable } from '@brokkr/db';

/** Back to the default policy; false when the stack had none. */
export async function deleteDriftPolicy(db: Queryable, stackId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM stack_drift_policies WHERE stack_id = $1', [stackId]);
  return (rowCount ?? 0) > 0;
}
