import type { Knex } from 'knex';

// Work orders: the live queue (PENDING / CLAIMED / RETRY_PENDING), its targeting tables, and the
// permanent log a finished order moves to (same id).

const queue = `
CREATE TABLE work_orders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  work_type varchar(50) NOT NULL,
  yaml_content text NOT NULL,
  status varchar(20) NOT NULL DEFAULT 'PENDING',
  claimed_by uuid REFERENCES agents (id) ON DELETE SET NULL,
  claimed_at timestamptz,
  claim_timeout_seconds integer NOT NULL DEFAULT 3600,
  max_retries integer NOT NULL DEFAULT 3,
  retry_count integer NOT NULL DEFAULT 0,
  backoff_seconds integer NOT NULL DEFAULT 60,
  next_retry_after timestamptz,
  last_error text,
  last_error_at timestamptz,
  CONSTRAINT valid_retry_count CHECK (retry_count >= 0 AND retry_count <= max_retries),
  CONSTRAINT valid_max_retries CHECK (max_retries >= 0),
  CONSTRAINT valid_backoff CHECK (backoff_seconds > 0),
  CONSTRAINT valid_claim_timeout CHECK (claim_timeout_seconds > 0),
  CONSTRAINT claimed_requires_agent CHECK (
    status <> 'CLAIMED' OR (claimed_by IS NOT NULL AND claimed_at IS NOT NULL)
  )
);
CREATE INDEX idx_work_orders_status ON work_orders (status);
CREATE INDEX idx_work_orders_work_type ON work_orders (work_type);
CREATE INDEX idx_work_orders_claimed_by ON work_orders (claimed_by) WHERE claimed_by IS NOT NULL;
CREATE INDEX idx_work_orders_stale_claims ON work_orders (claimed_at, claim_timeout_seconds)
  WHERE status = 'CLAIMED';
CREATE INDEX idx_work_orders_retry ON work_orders (next_retry_after) WHERE status = 'RETRY_PENDING';
CREATE INDEX idx_work_orders_pending_type ON work_orders (work_type, created_at) WHERE status = 'PENDING';
CREATE INDEX idx_work_orders_last_error_at ON work_orders (last_error_at) WHERE last_error IS NOT NULL;
CREATE TRIGGER update_work_orders_timestamp BEFORE UPDATE ON work_orders
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();
`;

const targeting = `
CREATE TABLE work_order_targets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  work_order_id uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (work_order_id, agent_id)
);
CREATE INDEX idx_work_order_targets_work_order_id ON work_order_targets (work_order_id);
CREATE INDEX idx_work_order_targets_agent_id ON work_order_targets (agent_id);

CREATE TABLE work_order_labels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  work_order_id uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
  label varchar(64) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (work_order_id, label)
);
CREATE INDEX idx_work_order_labels_work_order_id ON work_order_labels (work_order_id);
CREATE INDEX idx_work_order_labels_label ON work_order_labels (label);

CREATE TABLE work_order_annotations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  work_order_id uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
  key varchar(64) NOT NULL,
  value varchar(64) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (work_order_id, key, value)
);
CREATE INDEX idx_work_order_annotations_work_order_id ON work_order_annotations (work_order_id);
CREATE INDEX idx_work_order_annotations_key_value ON work_order_annotations (key, value);
`;

// No default on id: a log row carries the id of the work order it replaces.
const log = `
CREATE TABLE work_order_log (
  id uuid PRIMARY KEY,
  work_type varchar(50) NOT NULL,
  created_at timestamptz NOT NULL,
  claimed_at timestamptz,
  completed_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  claimed_by uuid REFERENCES agents (id) ON DELETE SET NULL,
  success boolean NOT NULL,
  retries_attempted integer NOT NULL DEFAULT 0,
  result_message text,
  yaml_content text NOT NULL,
  CONSTRAINT valid_retries_attempted CHECK (retries_attempted >= 0)
);
CREATE INDEX idx_work_order_log_work_type ON work_order_log (work_type);
CREATE INDEX idx_work_order_log_success ON work_order_log (success);
CREATE INDEX idx_work_order_log_completed_at ON work_order_log (completed_at);
CREATE INDEX idx_work_order_log_claimed_by ON work_order_log (claimed_by) WHERE claimed_by IS NOT NULL;
CREATE INDEX idx_work_order_log_type_completed ON work_order_log (work_type, completed_at DESC);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(queue);
  await knex.raw(targeting);
  await knex.raw(log);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
