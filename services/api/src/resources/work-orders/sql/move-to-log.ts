import { WORK_ORDER_LOG_COLUMNS } from '../../../domain/work-order-row.ts';

/**
 * The two CTEs that move an order from the queue to its log (same id, retries_attempted = its
 * retry_count; its targets, labels and annotations cascade): `gone` deletes the rows matching
 * `where`, `logged` holds their log rows. `success` and `message` are SQL expressions.
 */
export const moveToLogSql = (o: { where: string; success: string; message: string }) =>
  `gone AS (DELETE FROM work_orders WHERE ${o.where} RETURNING *),
   logged AS (
     INSERT INTO work_order_log (id, work_type, created_at, claimed_at, claimed_by, success, retries_attempted, result_message, yaml_content)
     SELECT id, work_type, created_at, claimed_at, claimed_by, ${o.success}, retry_count, ${o.message}, yaml_content FROM gone
     RETURNING ${WORK_ORDER_LOG_COLUMNS}
   )`;
