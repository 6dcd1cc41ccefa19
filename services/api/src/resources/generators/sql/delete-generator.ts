import type { Queryable } from '@brokkr/db';

/**
 * Soft-deletes a generator (the cascade triggers delete its stacks, their objects and its
 * templates) and returns the hash that must stop authenticating. `deleted_at IS NULL` makes a
 * concurrent second delete a no-op.
 */
export async function softDeleteGenerator(tx: Queryable, id: string): Promise<{ pak_hash: string | null } | undefined> {
  const { rows } = await tx.query<{ pak_hash: string | null }>(
    'UPDATE generators SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING pak_hash',
    [id],
  );
  return rows[0];
}
