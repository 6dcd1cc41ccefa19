import type { Queryable } from '@brokkr/db';
import { WORK_ORDER_COLUMNS, type WorkOrderRow } from '../../../domain/work-order-row.ts';

/** Longest retry delay: 2^31 - 1 s (the exponent is clamped first so the product stays finite). */
const MAX_DELAY_SECONDS = 2147483647;

/**
 * A retryable failure with retries left: RETRY_PENDING, retry_count = n, due at
 * now + backoff_seconds × 2^n, claim cleared, the error kept. maintenance makes it PENDING again.
 */
export async function scheduleRetry(db: Queryable, id: string, n: number, error: string): Promise<WorkOrderRow | undefined> {
  const { rows } = await db.query<WorkOrderRow>(
    `UPDATE work_orders
        SET status = 'RETRY_PENDING', retry_count = $2,
            next_retry_after = now() + make_interval(secs => LEAST(backoff_seconds * power(2::float8, LEAST($2, 62)), ${MAX_DELAY_SECONDS})),
            claimed_by = NULL, claimed_at = NULL, last_error = $3, last_error_at = now()
      WHERE id = $1
      RETURNING ${WORK_ORDER_COLUMNS}`,
    [id, n, error],
  );
  return rows[0];
}
