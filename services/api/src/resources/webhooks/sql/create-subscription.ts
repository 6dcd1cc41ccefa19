import type { Queryable } from '@brokkr/db';
import { SUBSCRIPTION_COLUMNS, type SubscriptionRow } from '../../../domain/webhook-subscriptions.ts';

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
     RETURNING ${SUBSCRIPTION_COLUMNS}`,
    [
      s.name,
      s.urlEncrypted,
      s.authHeaderEncrypted,
      s.eventTypes,
      s.filters,
      s.targetLabels,
      s.maxRetries,
      s.timeoutSeconds,
      s.signingSecretEncrypted,
    ],
  );
  return rows[0]!;
}
