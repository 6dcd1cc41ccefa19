import type { Knex } from 'knex';

// Transactional outbox: a write inserts its domain events here in the same transaction, then
// publishes them to JetStream and stamps published_at. The maintenance relay republishes rows
// still unpublished (crash between commit and publish, NATS down); the id is the event id and
// the Nats-Msg-Id, so a republish is deduplicated by the stream.

const outbox = `
CREATE TABLE outbox (
  id uuid PRIMARY KEY,
  event_type varchar(100) NOT NULL,
  subject text NOT NULL,
  payload jsonb NOT NULL,
  headers jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  attempts integer NOT NULL DEFAULT 0
);
-- The relay scans the unpublished rows oldest first.
CREATE INDEX idx_outbox_unpublished ON outbox (created_at) WHERE published_at IS NULL;
-- Retention deletes published rows by age.
CREATE INDEX idx_outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(outbox);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
