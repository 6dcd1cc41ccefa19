import type { Queryable } from '@brokkr/db';

/** Soft delete; the stack trigger retires its objects and inserts the deletion marker. */
export async function softDeleteStack(db: Queryable, id: string): Promise<Date | undefined> {
  const { rows } = await db.query<{ deleted_at: Date }>(
    'UPDATE stacks SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at',
    [id],
  );
  return rows[0]?.deleted_at;
}
