import type { Queryable } from '@brokkr/db';

/** The read-only statements of webhook subscriptions (the webhooks and webhook-deliveries resources use both). */

/** A webhook_subscriptions row without the secrets' ciphertexts (only whether they are set). */
export interface SubscriptionRow {
  id: string;
  name: string;
  has_url: boolean;
  has_auth_header: boolean;
  event_types: string[];
  filters: string | null;
  target_labels: string[] | null;
  enabled: boolean;
  max_retries: number;
  timeout_seconds: number;
  created_at: Date;
  updated_at: Date;
  created_by: string | null;
}

export const SUBSCRIPTION_COLUMNS = `id, name, octet_length(url_encrypted) > 0 AS has_url, auth_header_encrypted IS NOT NULL AS has_auth_header,
  event_types, filters, target_labels, enabled, max_retries, timeout_seconds, created_at, updated_at, created_by`;

export async function listSubscriptions(db: Queryable): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions ORDER BY created_at DESC`);
  return rows;
}

export async function findSubscription(db: Queryable, id: string): Promise<SubscriptionRow | undefined> {
  const { rows } = await db.query<SubscriptionRow>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE id = $1`, [id]);
  return rows[0];
}

export interface SubscriptionSecrets {
  id: string;
  url_encrypted: Buffer;
  auth_header_encrypted: Buffer | null;
  signing_secret_encrypted: Buffer | null;
  /** Only while the rotation grace period runs. */
  previous_signing_secret_encrypted: Buffer | null;
  timeout_seconds: number;
}

export async function findSubscriptionSecrets(db: Queryable, id: string): Promise<SubscriptionSecrets | undefined> {
  const { rows } = await db.query<SubscriptionSecrets>(
    `SELECT id, url_encrypted, auth_header_encrypted, signing_secret_encrypted, timeout_seconds,
            CASE WHEN previous_signing_secret_expires_at > now() THEN previous_signing_secret_encrypted END AS previous_signing_secret_encrypted
       FROM webhook_subscriptions WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** Whether any subscription exists (the start-up key guard's question). */
export async function anySubscriptionExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ exists: boolean }>('SELECT EXISTS (SELECT 1 FROM webhook_subscriptions) AS exists');
  return rows[0]?.exists ?? false;
}
