import type { Queryable } from '@brokkr/db';

/** One (event, matched subscription) pair. */
export interface NewDelivery {
  subscriptionId: string;
  eventId: string;
  eventType: string;
  payload: string;
}

/**
 * (none) → pending, by the dispatcher's event intake.
 * The deliveries of a whole batch of events in one statement. UNIQUE (event_id, subscription_id)
 * makes a redelivered NATS message (a replica died before its ack) insert nothing, and two
 * replicas inserting the same pair at once conflict on the index instead of doubling it: no lock
 * to reason about beyond the unique index. Joining webhook_subscriptions re-checks that each
 * subscription still exists and is enabled (the matching cache may be a moment old) and copies
 * its current target_labels (non-empty: agents deliver it). created_at, which orders the claims,
 * is offset by a microsecond per row: a batch holding two events of one resource (a work order
 * claimed, then completed) delivers them in stream order, not in the order of a tie.
 * Returns how many new rows there are, and how many of them the dispatcher itself delivers.
 */
export async function insertDeliveries(db: Queryable, rows: readonly NewDelivery[]): Promise<{ inserted: number; forHub: number }> {
  if (rows.length === 0) return { inserted: 0, forHub: 0 };
  const result = await db.query<{ for_hub: boolean }>({
    name: 'webhook-insert-deliveries',
    text: `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, target_labels, created_at)
           SELECT s.id, e.event_type, e.event_id, e.payload, s.target_labels, now() + make_interval(secs => e.n / 1e6)
             FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS e(subscription_id, event_id, event_type, payload, n)
             JOIN webhook_subscriptions s ON s.id = e.subscription_id AND s.enabled
           ON CONFLICT (event_id, subscription_id) DO NOTHING
           RETURNING (target_labels IS NULL OR cardinality(target_labels) = 0) AS for_hub`,
    values: [rows.map((r) => r.subscriptionId), rows.map((r) => r.eventId), rows.map((r) => r.eventType), rows.map((r) => r.payload)],
  });
  return { inserted: result.rows.length, forHub: result.rows.filter((r) => r.for_hub).length };
}
