import type { Queryable } from '@brokkr/db';

/** Its bypasses go with it (ON DELETE CASCADE); the audit log keeps their record. */
export async function deleteWindow(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM maintenance_windows WHERE id = $1', [id]);
}
