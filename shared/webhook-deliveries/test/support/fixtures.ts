import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { insertDeliveries, type DeliveryRow } from '../../src/index.ts';

export interface SubscriptionSpec {
  targetLabels?: string[] | null;
  maxRetries?: number;
  timeoutSeconds?: number;
  enabled?: boolean;
}

/** The package never decrypts: the url and secret are opaque bytes here. */
export async function insertSubscription(db: pg.Pool, spec: SubscriptionSpec = {}): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO webhook_subscriptions (name, url_encrypted, event_types, target_labels, enabled, max_retries, timeout_seconds, created_by)
     VALUES ($1, '\\x01'::bytea, ARRAY['*'], $2, $3, $4, $5, 'admin') RETURNING id`,
    [`sub-${randomUUID().slice(0, 8)}`, spec.targetLabels ?? null, spec.enabled ?? true, spec.maxRetries ?? 5, spec.timeoutSeconds ?? 30],
  );
  return rows[0]!.id;
}

export async function insertAgent(db: pg.Pool, labels: readonly string[]): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO agents (name, cluster_name, status) VALUES ($1, 'c', 'ACTIVE') RETURNING id`,
    [`agent-${randomUUID().slice(0, 8)}`],
  );
  const id = rows[0]!.id;
  for (const label of labels) await db.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [id, label]);
  return id;
}

/** One delivery of a fresh event, created the way the dispatcher's intake creates it. */
export async function createDelivery(db: pg.Pool, subscriptionId: string): Promise<string> {
  const eventId = randomUUID();
  await insertDeliveries(db, [{ subscriptionId, eventId, eventType: 'stack.created', payload: '{}' }]);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
  return rows[0]!.id;
}

export async function row(db: pg.Pool, id: string): Promise<DeliveryRow & { lease_left: number | null; retry_in: number | null }> {
  const { rows } = await db.query(
    `SELECT *, extract(epoch FROM acquired_until - now())::float AS lease_left, extract(epoch FROM next_retry_at - now())::float AS retry_in
       FROM webhook_deliveries WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** As if the holder died: its lease ran out. */
export async function expireLease(db: pg.Pool, id: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET acquired_until = now() - interval '1 second' WHERE id = $1`, [id]);
}

/** As if the backoff had passed. */
export async function makeRetryDue(db: pg.Pool, id: string): Promise<void> {
  await db.query(`UPDATE webhook_deliveries SET next_retry_at = now() - interval '1 second' WHERE id = $1`, [id]);
}
