import type { TaskClient } from './queryable.ts';

/**
 * Deletes up to `limit` outbox rows published more than `retentionHours` ago (they are in
 * JetStream; the outbox only has to outlive the relay). `FOR UPDATE SKIP LOCKED` in the CTE
 * locks the chosen rows for this one statement and skips any row another session holds, so it
 * never waits on the api. Idempotent: a second run finds nothing more to delete.
 */
export async function prunePublishedOutbox(db: TaskClient, retentionHours: number, limit: number): Promise<number> {
  const result = await db.query(
    `WITH doomed AS (
       SELECT id FROM outbox
        WHERE published_at IS NOT NULL
          AND published_at < now() - make_interval(hours => $1)
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     DELETE FROM outbox o USING doomed WHERE o.id = doomed.id`,
    [retentionHours, limit],
  );
  return result.rowCount ?? 0;
}
