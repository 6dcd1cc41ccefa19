import type { Queryable } from '@brokkr/db';

/** Removes the edge; false when there was none. */
export async function removeDependency(db: Queryable, dependentId: string, dependsOn: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM stack_dependencies WHERE stack_id = $1 AND depends_on = $2', [dependentId, dependsOn]);
  return (rowCount ?? 0) > 0;
}
