import type { Queryable } from '@brokkr/db';

/** The tenants: every live, non-system generator, by name. */
export async function listPakSummaries(db: Queryable): Promise<{ id: string; name: string }[]> {
  const { rows } = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM generators WHERE deleted_at IS NULL AND NOT is_system ORDER BY name, id',
  );
  return rows;
}
