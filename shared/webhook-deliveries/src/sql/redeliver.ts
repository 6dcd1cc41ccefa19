import type { Queryable } from '@brokkr/db';
import { DELIVERY_COLUMNS, type DeliveryRow } from '../delivery-row.ts';

/**
 * success | dead → pending, by an admin (`POST /webhook-deliveries/{id}/redeliver`).
 * Puts a finished delivery back in line with a fresh attempt budget. The status condition makes
 * it a compare-and-set on the row's lock: a delivery still pending, in flight or waiting for a
 * retry is not touched (undefined), and of two admins redelivering at once only one succeeds.
 */
export async function redeliver(db: Queryable, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries
        SET status = 'pending', attempts = 0, next_retry_at = NULL, completed_at = NULL, acquired_by = NULL, acquired_until = NULL
      WHERE id = $1 AND status IN ('success', 'dead')
  RETURNING ${DELIVERY_COLUMNS}`,
    [id],
  );
  return rows[0];
}
