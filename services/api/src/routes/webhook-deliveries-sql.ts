import type { Queryable } from '@brokkr/db';

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_type: string;
  event_id: string;
  payload: string;
  target_labels: string[] | null;
  status: 'pending' | 'acquired' | 'success' | 'failed' | 'dead';
  acquired_by: string | null;
  acquired_until: Date | null;
  attempts: number;
  last_attempt_at: Date | null;
  next_retry_at: Date | null;
  last_error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export const DELIVERY_COLUMNS = `id, subscription_id, event_type, event_id, payload, target_labels, status, acquired_by, acquired_until,
  attempts, last_attempt_at, next_retry_at, last_error, created_at, completed_at`;

export async function listDeliveriesForSubscription(
  db: Queryable,
  subscriptionId: string,
  q: { status?: string | undefined; limit: number; offset: number },
): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE subscription_id = $1 AND ($2::text IS NULL OR status = $2)
      ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
    [subscriptionId, q.status ?? null, q.limit, q.offset],
  );
  return rows;
}

export async function listDeliveries(
  db: Queryable,
  q: { status?: string | undefined; subscriptionId?: string | undefined; limit: number },
): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE ($1::text IS NULL OR status = $1) AND ($2::uuid IS NULL OR subscription_id = $2)
      ORDER BY created_at DESC, id LIMIT $3`,
    [q.status ?? null, q.subscriptionId ?? null, q.limit],
  );
  return rows;
}

export async function findDelivery(db: Queryable, id: string): Promise<(DeliveryRow & { max_retries: number | null }) | undefined> {
  const { rows } = await db.query<DeliveryRow & { max_retries: number | null }>(
    `SELECT ${DELIVERY_COLUMNS.replace(/(\w+)/g, 'd.$1')}, s.max_retries
       FROM webhook_deliveries d LEFT JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1`,
    [id],
  );
  return rows[0];
}

/**
 * Puts a finished (success or dead) delivery back in line with a fresh attempt budget. The status
 * condition makes it a compare-and-set: a delivery still pending or in flight is not touched.
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
