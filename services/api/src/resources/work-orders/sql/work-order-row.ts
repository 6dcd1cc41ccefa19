/** A work_orders row as the API serializes it (the v1 WorkOrder). */
export interface WorkOrderRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  work_type: string;
  yaml_content: string;
  status: string;
  claimed_by: string | null;
  claimed_at: Date | null;
  claim_timeout_seconds: number;
  max_retries: number;
  retry_count: number;
  backoff_seconds: number;
  next_retry_after: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
}

export const WORK_ORDER_COLUMNS =
  'id, created_at, updated_at, work_type, yaml_content, status, claimed_by, claimed_at, claim_timeout_seconds, ' +
  'max_retries, retry_count, backoff_seconds, next_retry_after, last_error, last_error_at';

/** The same columns qualified by a table alias (`w.id, w.created_at, …`). */
export const workOrderColumns = (alias: string) =>
  WORK_ORDER_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** A work_order_log row (the v1 WorkOrderLog). */
export interface WorkOrderLogRow {
  id: string;
  work_type: string;
  created_at: Date;
  claimed_at: Date | null;
  completed_at: Date;
  claimed_by: string | null;
  success: boolean;
  retries_attempted: number;
  result_message: string | null;
  yaml_content: string;
}

export const WORK_ORDER_LOG_COLUMNS =
  'id, work_type, created_at, claimed_at, completed_at, claimed_by, success, retries_attempted, result_message, yaml_content';

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

/**
 * "This order targets agent $n" (Brokkr's rule, an OR): an explicit target, any shared label, or any
 * shared (key, value) annotation. `w` is the work_orders alias.
 */
export const targetsAgent = (param: string) => `(
  EXISTS (SELECT 1 FROM work_order_targets t WHERE t.work_order_id = w.id AND t.agent_id = ${param})
  OR EXISTS (SELECT 1 FROM work_order_labels l JOIN agent_labels al ON al.label = l.label
              WHERE l.work_order_id = w.id AND al.agent_id = ${param})
  OR EXISTS (SELECT 1 FROM work_order_annotations o JOIN agent_annotations aa ON aa.key = o.key AND aa.value = o.value
              WHERE o.work_order_id = w.id AND aa.agent_id = ${param}))`;
