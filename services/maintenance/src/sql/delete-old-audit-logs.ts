import type { TaskClient } from './queryable.ts';

/**
 * Audit retention: hard-deletes up to `limit` entries whose created_at is older
 * than `retentionDays`. Audit rows are append-only, so nobody else locks them; SKIP LOCKED is
 * there only so the statement can never wait. Idempotent by its WHERE.
 */
export async function deleteOldAuditLogs(db: TaskClient, retentionDays: number, limit: number): Promise<number> {
  const result = await db.query(
    `WITH doomed AS (
       SELECT id FROM audit_logs
        WHERE created_at < now() - make_interval(days => $1)
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     DELETE FROM audit_logs a USING doomed WHERE a.id = doomed.id`,
    [retentionDays, limit],
  );
  return result.rowCount ?? 0;
}
