import type { Queryable } from '@brokkr/db';

/** Live agents' heartbeat ages in whole seconds (null: never), for the heartbeat-age gauge. */
export async function heartbeatAges(db: Queryable): Promise<{ id: string; name: string; age: number | null }[]> {
  const { rows } = await db.query<{ id: string; name: string; age: number | null }>(
    `SELECT id, name, floor(greatest(0, extract(epoch FROM now() - last_heartbeat)))::int AS age
       FROM agents WHERE deleted_at IS NULL AND last_heartbeat IS NOT NULL`,
  );
  return rows;
}
