import type { Knex } from 'knex';

// Per-agent deployment health, on-demand diagnostics, and the short-lived telemetry buffers
// (Kubernetes events and pod log lines, evicted after at most 6 hours by created_at).

const health = `
CREATE TABLE deployment_health (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  deployment_object_id uuid NOT NULL REFERENCES deployment_objects (id) ON DELETE CASCADE,
  status varchar(20) NOT NULL,
  summary text,
  checked_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT unique_agent_deployment_health UNIQUE (agent_id, deployment_object_id),
  CONSTRAINT valid_health_status CHECK (status IN ('healthy', 'degraded', 'failing', 'unknown'))
);
CREATE INDEX idx_deployment_health_agent_id ON deployment_health (agent_id);
CREATE INDEX idx_deployment_health_deployment_object_id ON deployment_health (deployment_object_id);
CREATE INDEX idx_deployment_health_status ON deployment_health (status);
CREATE INDEX idx_deployment_health_checked_at ON deployment_health (checked_at);
CREATE TRIGGER update_deployment_health_timestamp BEFORE UPDATE ON deployment_health
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();
`;

const diagnostics = `
CREATE TABLE diagnostic_requests (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  deployment_object_id uuid NOT NULL REFERENCES deployment_objects (id) ON DELETE CASCADE,
  status varchar(20) NOT NULL DEFAULT 'pending',
  requested_by varchar(255),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  claimed_at timestamptz,
  completed_at timestamptz,
  expires_at timestamptz NOT NULL,
  CONSTRAINT valid_diagnostic_request_status
    CHECK (status IN ('pending', 'claimed', 'completed', 'failed', 'expired'))
);
CREATE INDEX idx_diagnostic_requests_agent_pending ON diagnostic_requests (agent_id) WHERE status = 'pending';
CREATE INDEX idx_diagnostic_requests_expires_at ON diagnostic_requests (expires_at);
CREATE INDEX idx_diagnostic_requests_deployment_object_id ON diagnostic_requests (deployment_object_id);

CREATE TABLE diagnostic_results (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  request_id uuid NOT NULL REFERENCES diagnostic_requests (id) ON DELETE CASCADE,
  pod_statuses text NOT NULL,
  events text NOT NULL,
  log_tails text,
  collected_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX idx_diagnostic_results_request_id ON diagnostic_results (request_id);
`;

const telemetry = `
CREATE TABLE agent_k8s_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  observed_at timestamptz NOT NULL,
  reason text NOT NULL,
  message text NOT NULL,
  event_type text NOT NULL,
  source text,
  involved_object jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX idx_agent_k8s_events_stack_created ON agent_k8s_events (stack_id, created_at DESC);
CREATE INDEX idx_agent_k8s_events_created_at ON agent_k8s_events (created_at);

CREATE TABLE agent_pod_logs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  namespace text NOT NULL,
  pod text NOT NULL,
  container text NOT NULL,
  ts timestamptz NOT NULL,
  line text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX idx_agent_pod_logs_stack_created ON agent_pod_logs (stack_id, created_at DESC);
CREATE INDEX idx_agent_pod_logs_created_at ON agent_pod_logs (created_at);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(health);
  await knex.raw(diagnostics);
  await knex.raw(telemetry);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
