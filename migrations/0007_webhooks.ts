import type { Knex } from 'knex';

// Webhook subscriptions (url and auth header encrypted at rest) and their deliveries.
// Ours on top of v1: Standard Webhooks signing secrets (current + previous during a rotation
// grace period) and a uniqueness rule on (event_id, subscription_id), so a redelivered NATS
// message can never create a second delivery.

const subscriptions = `
CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name varchar(255) NOT NULL,
  url_encrypted bytea NOT NULL,
  auth_header_encrypted bytea,
  event_types text[] NOT NULL,
  filters text,
  target_labels text[],
  enabled boolean NOT NULL DEFAULT true,
  max_retries integer NOT NULL DEFAULT 5,
  timeout_seconds integer NOT NULL DEFAULT 30,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  created_by varchar(255),
  signing_secret_encrypted bytea,
  previous_signing_secret_encrypted bytea,
  previous_signing_secret_expires_at timestamptz
);
CREATE INDEX idx_webhook_subscriptions_enabled ON webhook_subscriptions (enabled) WHERE enabled;
CREATE TRIGGER update_webhook_subscriptions_timestamp BEFORE UPDATE ON webhook_subscriptions
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();
`;

// target_labels NULL or empty: the dispatcher delivers; otherwise a matching agent does.
const deliveries = `
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  event_type varchar(100) NOT NULL,
  event_id uuid NOT NULL,
  payload text NOT NULL,
  target_labels text[],
  status varchar(20) NOT NULL DEFAULT 'pending',
  acquired_by uuid REFERENCES agents (id) ON DELETE SET NULL,
  acquired_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  last_attempt_at timestamptz,
  next_retry_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  completed_at timestamptz,
  CONSTRAINT valid_delivery_status CHECK (status IN ('pending', 'acquired', 'success', 'failed', 'dead')),
  CONSTRAINT unique_delivery_event_subscription UNIQUE (event_id, subscription_id)
);
CREATE INDEX idx_webhook_deliveries_pending ON webhook_deliveries (created_at) WHERE status = 'pending';
CREATE INDEX idx_webhook_deliveries_acquired ON webhook_deliveries (acquired_until) WHERE status = 'acquired';
CREATE INDEX idx_webhook_deliveries_retry ON webhook_deliveries (next_retry_at) WHERE status = 'failed';
CREATE INDEX idx_webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at DESC);
CREATE INDEX idx_webhook_deliveries_cleanup ON webhook_deliveries (created_at) WHERE status IN ('success', 'dead');
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(subscriptions);
  await knex.raw(deliveries);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
