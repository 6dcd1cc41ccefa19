import type { Queryable } from '@brokkr/db';
import { DELIVERY_COLUMNS, type DeliveryRow } from '@brokkr/webhook-deliveries';

// Reads only: every change of a delivery's state is a transition of @brokkr/webhook-deliveries.

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

/** The agent's status, undefined when it is not a live agent. */
export async function agentStatus(db: Queryable, agentId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ status: string }>('SELECT status FROM agents WHERE id = $1 AND deleted_at IS NULL', [agentId]);
  return rows[0]?.status;
}
