import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { encrypt, generateSigningSecret, loadWebhookKey, type WebhookKey } from '@brokkr/crypto';
import { publishCore, publishJson, SUBJECTS, type JetStreamClient, type NatsConnection } from '@brokkr/bus';

export const KEY_HEX = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
export const testKey: WebhookKey = loadWebhookKey(KEY_HEX);

export interface SubscriptionSpec {
  url: string;
  eventTypes?: string[];
  filters?: string | null;
  targetLabels?: string[] | null;
  authHeader?: string | null;
  maxRetries?: number;
  timeoutSeconds?: number;
  enabled?: boolean;
  secret?: string;
}

/** Inserts a subscription the way the api stores it (url, auth header and secret encrypted). */
export async function insertSubscription(db: pg.Pool, spec: SubscriptionSpec): Promise<{ id: string; secret: string }> {
  const secret = spec.secret ?? generateSigningSecret();
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO webhook_subscriptions (name, url_encrypted, auth_header_encrypted, event_types, filters, target_labels,
       enabled, max_retries, timeout_seconds, created_by, signing_secret_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'admin', $10) RETURNING id`,
    [
      `sub-${randomUUID().slice(0, 8)}`,
      encrypt(testKey, spec.url),
      spec.authHeader ? encrypt(testKey, spec.authHeader) : null,
      spec.eventTypes ?? ['*'],
      spec.filters ?? null,
      spec.targetLabels ?? null,
      spec.enabled ?? true,
      spec.maxRetries ?? 5,
      spec.timeoutSeconds ?? 5,
      encrypt(testKey, secret),
    ],
  );
  return { id: rows[0]!.id, secret };
}

export interface Envelope {
  id: string;
  event_type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export function envelope(eventType: string, data: Record<string, unknown> = {}): Envelope {
  return { id: randomUUID(), event_type: eventType, timestamp: new Date().toISOString(), data };
}

/** What the api's outbox publisher does after commit. */
export async function publishEvents(js: JetStreamClient, events: readonly Envelope[], msgID?: (e: Envelope) => string): Promise<void> {
  for (let i = 0; i < events.length; i += 500) {
    await Promise.all(
      events.slice(i, i + 500).map((e) => publishJson(js, SUBJECTS.event(e.event_type), e, { msgID: msgID ? msgID(e) : e.id })),
    );
  }
}

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_retry_at: Date | null;
  last_attempt_at: Date | null;
  payload: string;
  target_labels: string[] | null;
}

export async function deliveries(db: pg.Pool, where = 'true', values: unknown[] = []): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY created_at`, values);
  return rows;
}

/** What the api publishes after every subscription change: dispatchers reload their cache. */
export async function invalidateSubscriptionCache(nc: NatsConnection): Promise<void> {
  publishCore(nc, SUBJECTS.cacheInvalidate('webhooks'));
  await nc.flush();
}
