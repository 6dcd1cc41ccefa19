import type { TaskClient } from './queryable.ts';
import { workOrderAgents, type WorkOrderChange } from './work-order-agents.ts';

/**
 * Work-order retries: `RETRY_PENDING` orders whose next_retry_after has passed
 * become `PENDING` again (next_retry_after cleared) and can be claimed. An admin completing or
 * deleting the order concurrently holds the row: SKIP LOCKED leaves it, and the outer WHERE
 * re-checks the state, so the statement is idempotent. Returns the agents the promoted orders
 * target, to wake them.
 */
export async function promoteDueWorkOrderRetries(db: TaskClient, limit: number): Promise<WorkOrderChange> {
  const { rows } = await db.query<{ count: number; agent_ids: string[] }>(
    `WITH due AS (
       SELECT id FROM work_orders
        WHERE status = 'RETRY_PENDING' AND next_retry_after <= now()
        ORDER BY next_retry_after
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     ), promoted AS (
       UPDATE work_orders w
          SET status = 'PENDING', next_retry_after = NULL
         FROM due
        WHERE w.id = due.id
          AND w.status = 'RETRY_PENDING'
          AND w.next_retry_after <= now()
       RETURNING w.id
     )
     SELECT (SELECT count(*) FROM promoted)::int AS count, ${workOrderAgents('promoted')} AS agent_ids`,
    [limit],
  );
  return { count: rows[0]!.count, agentIds: rows[0]!.agent_ids };
}
