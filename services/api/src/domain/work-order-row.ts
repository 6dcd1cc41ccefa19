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
