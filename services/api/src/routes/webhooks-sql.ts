import type { Queryable } from '@brokkr/db';

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

const COLUMNS = `id, name, octet_length(url_encrypted) > 0 AS has_url, auth_header_encrypted IS NOT NULL AS has_auth_header,
  event_types, filters, target_labels, enabled, max_retries, timeout_seconds, created_at, updated_at, created_by`;

export async function listSubscriptions(db: Queryable): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>(`SELECT ${COLUMNS} FROM webhook_subscriptions ORDER BY created_at DESC`);
  return rows;
}

export async function findSubscription(db: Queryable, id: string): Promise<SubscriptionRow | undefined> {
  const { rows } = await db.query<SubscriptionRow>(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1`, [id]);
  return rows[0];
}

export interface NewSubscription {
  name: string;
  urlEncrypted: Buffer;
  authHeaderEncrypted: Buffer | null;
  eventTypes: string[];
  filters: string | null;
  targetLabels: string[] | null;
  maxRetries: number;
  timeoutSeconds: number;
  signingSecretEncrypted: Buffer;
}

export async function insertSubscription(db: Queryable, s: NewSubscription): Promise<SubscriptionRow> {
  const { rows } = await db.query<SubscriptionRow>(
    `INSERT INTO webhook_subscriptions (name, url_encrypted, auth_header_encrypted, event_types, filters, target_labels,
       max_retries, timeout_seconds, created_by, signing_secret_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'admin', $9)
     RETURNING ${COLUMNS}`,
    [s.name, s.urlEncrypted, s.authHeaderEncrypted, s.eventTypes, s.filters, s.targetLabels, s.maxRetries, s.timeoutSeconds, s.signingSecretEncrypted],
  );
  return rows[0]!;
}

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
    `UPDATE webhook_subscriptions SET ${sets} WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, ...entries.map(([, v]) => v)],
  );
  return rows[0];
}

/** Hard delete; the deliveries go with it (ON DELETE CASCADE). */
export async function deleteSubscription(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhook_subscriptions WHERE id = $1', [id]);
  return rowCount === 1;
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

/**
 * The current secret becomes the previous one, still signing until the grace period ends, so
 * receivers can switch to the new secret without dropping a delivery. One statement: two
 * concurrent rotations cannot both demote the same secret.
 */
export async function rotateSigningSecret(
  db: Queryable,
  id: string,
  next: Buffer,
  graceSeconds: number,
): Promise<{ name: string; enabled: boolean; previous_signing_secret_expires_at: Date | null } | undefined> {
  const { rows } = await db.query<{ name: string; enabled: boolean; previous_signing_secret_expires_at: Date | null }>(
    `UPDATE webhook_subscriptions
        SET previous_signing_secret_encrypted = signing_secret_encrypted,
            previous_signing_secret_expires_at = CASE WHEN signing_secret_encrypted IS NULL THEN NULL
                                                      ELSE now() + make_interval(secs => $3) END,
            signing_secret_encrypted = $2
      WHERE id = $1
  RETURNING name, enabled, previous_signing_secret_expires_at`,
    [id, next, graceSeconds],
  );
  return rows[0];
}
