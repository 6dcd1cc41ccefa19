import { prepared, type Queryable } from '@brokkr/db';
import { WORK_ORDER_LOG_COLUMNS, type WorkOrderLogRow } from './work-order-row.ts';

const finishStatement = prepared(
  'brokkr_work_order_finish',
  `WITH gone AS (DELETE FROM work_orders WHERE id = $1 RETURNING *)
   INSERT INTO work_order_log (id, work_type, created_at, claimed_at, claimed_by, success, retries_attempted, result_message, yaml_content)
   SELECT id, work_type, created_at, claimed_at, claimed_by, $2, retry_count, $3, yaml_content FROM gone
   RETURNING ${WORK_ORDER_LOG_COLUMNS}`,
);

/**
 * A terminal completion (success, or a failure with no retry left): the order moves to the log
 * (same id, retries_attempted = its retry_count) and leaves the queue (its targets, labels and
 * annotations cascade), in one statement. Undefined when the order is already gone.
 */
export async function finishWorkOrder(
  db: Queryable,
  id: string,
  outcome: { success: boolean; message: string | null },
): Promise<WorkOrderLogRow | undefined> {
  const { rows } = await db.query<WorkOrderLogRow>(finishStatement([id, outcome.success, outcome.message]));
  return rows[0];
}
