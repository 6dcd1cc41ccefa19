import type { Queryable } from '@brokkr/db';

/**
 * Soft-deletes a generator (the cascade triggers delete its stacks, their objects and its
 * templates) and returns the hash that must stop authenticating. `deleted_at IS NULL` makes a
 * concurrent second delete a no-op. Its registrations and pending requests go with it: a deleted
 * generator is nobody's tenant any more (a second tenant confines the first; a gone one must not).
 */
export async function softDeleteGenerator(tx: Queryable, id: string): Promise<{ pak_hash: string | null } | undefined> {
  const { rows } = await tx.query<{ pak_hash: string | null }>(
    `WITH deleted AS (
       UPDATE generators SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING id, pak_hash
     ),
     registrations AS (
       DELETE FROM agent_generator_registrations r USING deleted WHERE r.generator_id = deleted.id
     ),
     requests AS (
       DELETE FROM agent_registration_requests q USING deleted WHERE q.generator_id = deleted.id
     )
     SELECT pak_hash FROM deleted`,
    [id],
  );
  return rows[0];
}
