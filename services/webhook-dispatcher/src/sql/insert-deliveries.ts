import type { PgPool } from './pg-pool.ts';

export interface NewDeliveries {
  eventId: string;
  eventType: string;
  payload: string;
  subscriptionIds: readonly string[];
}

/**
 * One row per matched subscription, in one statement. UNIQUE (event_id, subscription_id) makes a
 * redelivered NATS message (a replica died before its ack) insert nothing. Selecting from
 * webhook_subscriptions re-checks that each subscription still exists and is enabled (the
 * matching cache may be a moment old) and copies its current target_labels.
 * Returns how many new rows the dispatcher itself must deliver (no target_labels).
 */
export async function insertDeliveries(db: PgPool, d: NewDeliveries): Promise<{ inserted: number; forHub: number }> {
  const { rows } = await db.query<{ for_hub: boolean }>({
    name: 'webhook-insert-deliveries',
    text: `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, target_labels)
     SELECT s.id, $2, $3, $4, s.target_labels
       FROM webhook_subscriptions s
      WHERE s.id = ANY($1::uuid[]) AND s.enabled
     ON CONFLICT (event_id, subscription_id) DO NOTHING
     RETURNING (target_labels IS NULL OR cardinality(target_labels) = 0) AS for_hub`,
    values: [d.subscriptionIds, d.eventType, d.eventId, d.payload],
  });
  return { inserted: rows.length, forHub: rows.filter((r) => r.for_hub).length };
}
