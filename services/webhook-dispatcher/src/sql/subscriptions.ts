import type { Queryable } from '@brokkr/db';

export interface SubscriptionRow {
  id: string;
  event_types: string[];
  filters: string | null;
  target_labels: string[] | null;
}

/** What matching needs; url, auth header and secrets stay encrypted until a delivery is claimed. */
export async function loadEnabledSubscriptions(db: Queryable): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(
    `SELECT id, event_types, filters, target_labels FROM webhook_subscriptions WHERE enabled`,
  );
  return rows;
}

export async function subscriptionsExist(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ exists: boolean }>(`SELECT EXISTS (SELECT 1 FROM webhook_subscriptions) AS exists`);
  return rows[0]?.exists ?? false;
}
