import type { Knex } from 'knex';

// Maintenance windows (docs/maintenance-windows.md): when the agents a window selects (by their
// labels, all of them; none given: every agent) may change their clusters, for the stacks it
// names (by id or by generator; none given: every stack, and the agent's work orders). The hub
// stores and serves them; the agent evaluates the recurrence and enforces them (ADR 0049).
//
// owner_generator_id is the generator that made the window (null: the admin's); a generator's
// window always names that generator in generator_ids, so it reaches only its own stacks.
// A bypass lifts its window until expires_at (at most 24 h ahead), or until ended_at when it is
// ended early; bypasses are never deleted, so the audit trail and the schedule agree.

const pinSearchPath = `SELECT set_config('search_path', quote_ident(current_schema()) || ', public', true)`;

const tables = `
CREATE TABLE maintenance_windows (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  type text NOT NULL,
  rrule text NOT NULL,
  duration_seconds integer NOT NULL,
  agent_labels text[] NOT NULL DEFAULT '{}',
  stack_ids uuid[] NOT NULL DEFAULT '{}',
  generator_ids uuid[] NOT NULL DEFAULT '{}',
  gates text[] NOT NULL,
  owner_generator_id uuid REFERENCES generators (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT maintenance_windows_type_check CHECK (type IN ('allow', 'deny')),
  CONSTRAINT maintenance_windows_duration_check CHECK (duration_seconds > 0 AND duration_seconds <= 604800),
  CONSTRAINT maintenance_windows_gates_check
    CHECK (cardinality(gates) > 0 AND gates <@ ARRAY['new_versions', 'drift_correction', 'prune', 'work_orders'])
);
CREATE INDEX maintenance_windows_owner ON maintenance_windows (owner_generator_id);

CREATE TABLE maintenance_window_bypasses (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  window_id uuid NOT NULL REFERENCES maintenance_windows (id) ON DELETE CASCADE,
  reason text NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX maintenance_window_bypasses_window ON maintenance_window_bypasses (window_id, expires_at);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(pinSearchPath);
  await knex.raw(tables);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
