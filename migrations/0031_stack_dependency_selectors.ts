import type { Knex } from 'knex';

// Dependencies by selector (docs/dependencies.md): stack_id waits until every stack carrying ALL of
// `labels` (stack labels) is ready by the rule of migration 0028 — per agent, the matching stacks
// that reach that agent (scope 'agent'), or everywhere (scope 'fleet'). A selector matching no
// stack is ready. Membership is dynamic: the stacks are matched when the rule is evaluated, so a
// stack labelled later joins.
//
// Who a selector may match is fixed when it is written, by who wrote it: `generator_id` is the
// writing generator (it matches that generator's stacks only, the ones it may read), NULL for the
// admin (any stack). The dependent stack never matches its own selector, and a deleted stack
// leaves the selection (it could never be ready again; a direct dependency on it says that on
// purpose, a label match does not).
//
// `labels` is stored sorted and without duplicates, so UNIQUE (stack_id, labels) refuses the same
// selector twice whatever the order it was written in. The rows go with either stack or generator
// on a hard delete. The graph (direct edges and selector matches together) stays acyclic: a
// selector written, and a stack label added, are checked under the advisory lock of migration
// 0028's graph.

const sql = `
CREATE TABLE stack_dependency_selectors (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  labels text[] NOT NULL,
  generator_id uuid REFERENCES generators (id) ON DELETE CASCADE,
  ready_when text NOT NULL,
  scope text NOT NULL DEFAULT 'agent',
  created_at timestamptz NOT NULL DEFAULT now(),
  created_by text NOT NULL,
  CONSTRAINT stack_dependency_selectors_unique UNIQUE (stack_id, labels),
  CONSTRAINT stack_dependency_selectors_labels_check CHECK (cardinality(labels) > 0),
  CONSTRAINT stack_dependency_selectors_ready_when_check CHECK (ready_when IN ('applied', 'healthy')),
  CONSTRAINT stack_dependency_selectors_scope_check CHECK (scope IN ('agent', 'fleet'))
);
CREATE INDEX idx_stack_dependency_selectors_labels ON stack_dependency_selectors USING gin (labels);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
