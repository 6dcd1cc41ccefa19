import type { Queryable } from '@brokkr/db';

/** The owning generator of each of `stackIds` that is still live; deleted or unknown stacks are absent. */
export async function liveStackOwners(db: Queryable, stackIds: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; generator_id: string }>(
    'SELECT id, generator_id FROM stacks WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL',
    [stackIds],
  );
  return new Map(rows.map((r) => [r.id, r.generator_id]));
}
