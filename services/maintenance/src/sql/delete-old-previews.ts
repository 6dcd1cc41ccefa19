import type { TaskClient } from './queryable.ts';

/**
 * Preview retention: hard-deletes up to `limit` diff previews (and, by cascade, their per-agent
 * results) whose hand-out window ended more than `retentionHours` ago. A preview is only read
 * after that, never changed, so there is nothing to lock against.
 */
export async function deleteOldPreviews(db: TaskClient, retentionHours: number, limit: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM previews WHERE id IN (
       SELECT id FROM previews WHERE expires_at < now() - make_interval(hours => $1) LIMIT $2
     )`,
    [retentionHours, limit],
  );
  return result.rowCount ?? 0;
}
