import type { Queryable } from '@brokkr/db';

/** Soft delete (the trigger retires the agent's events); undefined when there was nothing to delete. */
export async function softDeleteAgent(tx: Queryable, id: string): Promise<{ deleted_at: Date; pak_hash: string } | undefined> {
  const { rows } = await tx.query<{ deleted_at: Date; pak_hash: string }>(
    'UPDATE agents SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at, pak_hash',
    [id],
  );
  return rows[0];
}
