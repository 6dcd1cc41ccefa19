import type { Knex } from 'knex';

// Drift (docs/drift.md, ADR 0044): changes made to applied objects behind the agent's back.
//
// A stack's drift policy (mode, comparison, ignore rules, per-cluster-group overrides) reaches its
// agents inside their grants (services/api/src/domain/grants.ts), so a change to it moves the
// target state's ETag and every agent reads it before it next acts.
//
// A drift record is one object's drift on one agent, from the moment the agent saw it until it was
// corrected, went away by itself (resolved) or an operator accepted it. `id` is the episode id the
// agent chose, so a report batch sent twice inserts nothing new; at most one record per agent,
// stack and object is open at a time (the partial unique index), and later reports of the same
// episode update it. `paths` and `managers` repeat what `fields` holds, so grouping by field or
// manager across 100,000 records unnests two small arrays instead of a jsonb document each.
// Pages are keyset pages on (first_seen, id), which never change, so paging returns every record
// exactly once while reports keep updating last_seen.

const tables = `
CREATE TABLE stack_drift_policies (
  stack_id uuid PRIMARY KEY REFERENCES stacks (id) ON DELETE CASCADE,
  policy jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TRIGGER update_stack_drift_policies_timestamp BEFORE UPDATE ON stack_drift_policies
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE TABLE drift_records (
  id uuid PRIMARY KEY,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  deployment_object_id uuid REFERENCES deployment_objects (id) ON DELETE SET NULL,
  api_version text NOT NULL,
  kind text NOT NULL,
  namespace text,
  name text NOT NULL,
  -- <group>/<Kind>/<namespace>/<name>: one object, whichever version of its group the agent used.
  object_key text NOT NULL,
  missing boolean NOT NULL DEFAULT false,
  fields jsonb NOT NULL DEFAULT '[]',
  paths text[] NOT NULL DEFAULT '{}',
  managers text[] NOT NULL DEFAULT '{}',
  state text NOT NULL DEFAULT 'open',
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  closed_at timestamptz,
  accepted_by text,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT valid_drift_state CHECK (state IN ('open', 'corrected', 'resolved', 'accepted')),
  CONSTRAINT drift_closed_when_not_open CHECK ((state = 'open') = (closed_at IS NULL))
);
CREATE UNIQUE INDEX drift_records_one_open ON drift_records (agent_id, stack_id, object_key) WHERE state = 'open';
CREATE INDEX idx_drift_records_page ON drift_records (first_seen DESC, id DESC);
CREATE INDEX idx_drift_records_stack ON drift_records (stack_id, first_seen DESC, id DESC);
CREATE INDEX idx_drift_records_agent ON drift_records (agent_id, first_seen DESC, id DESC);
CREATE INDEX idx_drift_records_open ON drift_records (stack_id, agent_id) WHERE state = 'open';
CREATE TRIGGER update_drift_records_timestamp BEFORE UPDATE ON drift_records
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(tables);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
