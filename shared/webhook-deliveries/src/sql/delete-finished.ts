import type { Queryable } from '@brokkr/db';

/**
 * success | dead → (deleted), by the maintenance retention task.
 * Hard-deletes up to `limit` deliveries that ended (`success`, `dead`) and were created more
 * than `retentionDays` ago (Brokkr's webhook cleanup). SKIP LOCKED: a row an
 * admin is redelivering or an agent is reporting a late result on right now is simply left for
 * the next tick; the DELETE then only touches rows this statement locked.
 */
export async function deleteFinishedDeliveries(db: Queryable, retentionDays: number, limit: number): Promise<number> {
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
