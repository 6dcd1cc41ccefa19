import type { Knex } from 'knex';

// Dependencies between stacks (docs/dependencies.md): stack_id is served to an agent only once every
// stack it depends_on is ready there — `applied` (the agent's last event for the dependency's newest
// object is a SUCCESS) or `healthy` (the agent reports that object healthy) — on the same agent
// (scope 'agent') or on every agent the dependency targets (scope 'fleet').
//
// What a dependency on a deleted stack means: stacks are soft-deleted (deleted_at), so the row
// stays and still gates — a deleted stack is never ready, and its dependents keep what their agents
// last applied (nothing new) until someone removes the dependency. That fails closed on purpose:
// a workload that needed a CRD stack must not roll forward once the CRDs are gone. Only a hard
// delete (admin tooling and retention, never the API) removes a stack row; the dependency has no
// meaning without both ends then, so it goes with it (ON DELETE CASCADE on both columns).
//
// The graph is acyclic: the api refuses an edge that closes a cycle, under a transaction-level
// advisory lock over the whole graph, so two concurrent writes cannot each add half of a cycle.
//
// The primary key serves "the dependencies of a stack" (the target-state query probes it for every
// stack an agent holds); idx_stack_dependencies_depends_on serves "who depends on this stack" (an
// agent's event or health report on an object of a stack others depend on wakes whom it gates).

const sql = `
CREATE TABLE stack_dependencies (
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  depends_on uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  ready_when text NOT NULL,
  scope text NOT NULL DEFAULT 'agent',
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL,
  PRIMARY KEY (stack_id, depends_on),
  CONSTRAINT stack_dependencies_ready_when_check CHECK (ready_when IN ('applied', 'healthy')),
  CONSTRAINT stack_dependencies_scope_check CHECK (scope IN ('agent', 'fleet')),
  CONSTRAINT stack_dependencies_not_self CHECK (stack_id <> depends_on)
);
CREATE INDEX idx_stack_dependencies_depends_on ON stack_dependencies (depends_on);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
