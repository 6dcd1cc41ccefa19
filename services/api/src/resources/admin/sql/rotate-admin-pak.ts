import type { Queryable } from '@brokkr/db';

/**
 * Swaps the admin PAK hash (the first admin_role row, the only one the middleware reads) and,
 * when it still carries the same hash, the `admin-generator` that first start linked to it:
 * otherwise the old admin PAK would keep authenticating, as that generator. Returns the old hash
 * (read under the row lock, so two concurrent rotations serialise), or undefined when there is
 * no admin row (first start has not run).
 */
export async function rotateAdminPak(tx: Queryable, newHash: string): Promise<{ oldHash: string } | undefined> {
  const { rows } = await tx.query<{ old_hash: string }>(
    `WITH old AS (SELECT id, pak_hash FROM admin_role ORDER BY created_at, id LIMIT 1 FOR UPDATE)
     UPDATE admin_role a SET pak_hash = $1 FROM old WHERE a.id = old.id
     RETURNING old.pak_hash AS old_hash`,
    [newHash],
  );
  const oldHash = rows[0]?.old_hash;
  if (oldHash === undefined) return undefined;
  await tx.query('UPDATE generators SET pak_hash = $1 WHERE pak_hash = $2 AND deleted_at IS NULL', [newHash, oldHash]);
  return { oldHash };
}
