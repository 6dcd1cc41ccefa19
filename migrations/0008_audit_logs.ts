import type { Knex } from 'knex';

// Append-only audit trail. The entry id is assigned by the emitter and doubles as the
// idempotency key: the audit-writer inserts with ON CONFLICT (id) DO NOTHING, so a NATS
// redelivery never duplicates an entry (the primary key is the only index that needs).

const auditLogs = `
CREATE TABLE audit_logs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  "timestamp" timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  actor_type varchar(20) NOT NULL,
  actor_id uuid,
  action varchar(100) NOT NULL,
  resource_type varchar(50) NOT NULL,
  resource_id uuid,
  details jsonb,
  ip_address text,
  user_agent text,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT valid_actor_type CHECK (actor_type IN ('admin', 'agent', 'generator', 'system'))
);
CREATE INDEX idx_audit_logs_timestamp ON audit_logs ("timestamp" DESC);
CREATE INDEX idx_audit_logs_actor ON audit_logs (actor_type, actor_id, "timestamp" DESC);
CREATE INDEX idx_audit_logs_resource ON audit_logs (resource_type, resource_id, "timestamp" DESC);
CREATE INDEX idx_audit_logs_action ON audit_logs (action, "timestamp" DESC);
CREATE INDEX idx_audit_logs_cleanup ON audit_logs (created_at);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(auditLogs);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
