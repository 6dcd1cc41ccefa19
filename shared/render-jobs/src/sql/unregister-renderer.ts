import type { Queryable } from '@brokkr/db';

/**
 * alive → gone; by the renderer as it stops, so the api stops counting on it at once (and answers
 * 503 renderer_unavailable when it was the last) instead of after the liveness window.
 */
export async function unregisterRenderer(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM renderers WHERE id = $1', [id]);
}
