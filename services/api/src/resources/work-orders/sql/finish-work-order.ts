import { prepared, type Queryable } from '@brokkr/db';
import type { WorkOrderLogRow } from '../../../domain/work-order-row.ts';
import { moveToLogSql } from './move-to-log.ts';

const finishStatement = prepared(
  'brokkr_work_order_finish',
  `WITH ${moveToLogSql({ where: 'id = $1', success: '$2::boolean', message: '$3' })}
   SELECT * FROM logged`,
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
