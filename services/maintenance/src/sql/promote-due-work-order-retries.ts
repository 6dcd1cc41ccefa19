import type { TaskClient } from './queryable.ts';

/**
 * Work-order retries (contract §6): `RETRY_PENDING` orders whose next_retry_after has passed
 * become `PENDING` again (next_retry_after cleared) and can be claimed. An admin completing or
 * deleting the order concurrently holds the row: SKIP LOCKED leaves it, and the outer WHERE
 * re-checks the state, so the statement is idempotent.
 */
export async function promoteDueWorkOrderRetries(db: TaskClient, limit: number): Promise<number> {
  const result = await db.query(
    `WITH due AS (
       SELECT id FROM work_orders
        WHERE status = 'RETRY_PENDING' AND next_retry_after <= now()
        ORDER BY next_retry_after
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     )
     UPDATE work_orders w
        SET status = 'PENDING', next_retry_after = NULL
       FROM due
      WHERE w.id = due.id
        AND w.status = 'RETRY_PENDING'
        AND w.next_retry_after <= now()`,
    [limit],
  );
  return result.rowCount ?? 0;
}
