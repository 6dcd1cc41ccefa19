import type { Queryable } from '@brokkr/db';

/**
 * Rows of renderers that died without unregistering (killed, or their node lost) → deleted once
 * they have not been seen for an hour; by the renderer's periodic tick. They stopped counting as
 * alive long before (ALIVE_SECONDS); the hour keeps them readable to an operator investigating.
 */
export async function forgetDeadRenderers(db: Queryable): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM renderers WHERE last_seen < now() - interval '1 hour'");
  return rowCount ?? 0;
}
