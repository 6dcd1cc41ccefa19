import type { Queryable } from '@brokkr/db';

/** DELETE /work-orders/{id}: a hard delete of an active order (targeting cascades). False when there was none. */
export async function deleteWorkOrder(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM work_orders WHERE id = $1', [id]);
  return (result.rowCount ?? 0) > 0;
}
