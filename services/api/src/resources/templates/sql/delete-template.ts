import type { Queryable } from '@brokkr/db';

/** Soft-deletes one version; false if it was not live (deleted concurrently). */
export async function softDeleteTemplate(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE stack_templates SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
  return rowCount === 1;
}
