import type { Queryable } from '@brokkr/db';
import { findSubscription, SUBSCRIPTION_COLUMNS, type SubscriptionRow } from '../../../domain/webhook-subscriptions.ts';

/** Column → new value; only the columns present change (`null` clears a nullable one). */
export type SubscriptionChanges = Partial<{
  name: string;
  url_encrypted: Buffer;
  auth_header_encrypted: Buffer | null;
  event_types: string[];
  filters: string | null;
  target_labels: string[] | null;
  enabled: boolean;
  max_retries: number;
  timeout_seconds: number;
}>;

export async function updateSubscription(db: Queryable, id: string, changes: SubscriptionChanges): Promise<SubscriptionRow | undefined> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return findSubscription(db, id);
  // Column names come from the SubscriptionChanges keys, never from the request.
  const sets = entries.map(([column], i) => `${column} = $${i + 2}`).join(', ');
  const { rows } = await db.query<SubscriptionRow>(
    `UPDATE webhook_subscriptions SET ${sets} WHERE id = $1 RETURNING ${SUBSCRIPTION_COLUMNS}`,
    [id, ...entries.map(([, v]) => v)],
  );
  return rows[0];
}
