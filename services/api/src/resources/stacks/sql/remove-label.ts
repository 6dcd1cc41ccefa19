import type { Queryable } from '@brokkr/db';

/** Whether the label was there. */
export async function deleteStackLabel(db: Queryable, stackId: string, label: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM stack_labels WHERE stack_id = $1 AND label = $2', [stackId, label]);
  return (rowCount ?? 0) > 0;
}
