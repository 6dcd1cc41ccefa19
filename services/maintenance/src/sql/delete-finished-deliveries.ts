import type { TaskClient } from './queryable.ts';

/**
 * Hard-deletes up to `limit` deliveries that ended (`success`, `dead`) and were created more
 * than `retentionDays` ago (Brokkr's webhook cleanup, contract §5.5). SKIP LOCKED: an agent
 * reporting a late result on one of them holds the row and is simply left alone this tick.
 */
export async function deleteFinishedDeliveries(db: TaskClient, retentionDays: number, limit: number): Promise<number> {
  const result = await db.query(
    `WITH doomed AS (
       SELECT id FROM webhook_deliveries
        WHERE status IN ('success', 'dead')
          AND created_at < now() - make_interval(days => $1)
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     DELETE FROM webhook_deliveries d USING doomed WHERE d.id = doomed.id`,
    [retentionDays, limit],
  );
  return result.rowCount ?? 0;
}
