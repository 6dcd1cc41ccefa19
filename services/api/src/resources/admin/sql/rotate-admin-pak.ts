import type { Queryable } from '@brokkr/db';
import { sameHash } from '../../../auth/sql/resolve-pak.ts';

export type AdminRotation = 'rotated' | 'current_pak_mismatch' | 'no_admin_role';

/**
 * Swaps the admin PAK hash (the first admin_role row, the only one the middleware reads) when
 * `currentHash` is the stored one, and, when it still carries the same hash, the
 * `admin-generator` that first start linked to it: otherwise the old admin PAK would keep
 * authenticating, as that generator. The row lock serialises concurrent rotations: the second
 * one presents a hash that is no longer current.
 */
export async function rotateAdminPak(tx: Queryable, currentHash: string, newHash: string): Promise<AdminRotation> {
  const { rows } = await tx.query<{ id: string; pak_hash: string }>(
    'SELECT id, pak_hash FROM admin_role ORDER BY created_at, id LIMIT 1 FOR UPDATE',
  );
  const row = rows[0];
  if (!row) return 'no_admin_role';
  if (!sameHash(row.pak_hash, currentHash)) return 'current_pak_mismatch';
  await tx.query('UPDATE admin_role SET pak_hash = $1 WHERE id = $2', [newHash, row.id]);
  await tx.query('UPDATE generators SET pak_hash = $1 WHERE pak_hash = $2 AND deleted_at IS NULL', [newHash, row.pak_hash]);
  return 'rotated';
}
