import type { Knex } from 'knex';

// Explicit targeting (agent_targets) and the agent → generator subscriptions that gate
// label/annotation matching at target-state time. Brokkr v1 backfilled the registrations from
// agent_targets when it introduced them; a fresh schema has nothing to backfill.

const targeting = `
CREATE TABLE agent_targets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  CONSTRAINT unique_agent_stack UNIQUE (agent_id, stack_id)
);
CREATE INDEX idx_agent_targets_agent_id ON agent_targets (agent_id);
CREATE INDEX idx_agent_targets_stack_id ON agent_targets (stack_id);

CREATE TABLE agent_generator_registrations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  generator_id uuid NOT NULL REFERENCES generators (id) ON DELETE CASCADE,
  registered_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, generator_id)
);
CREATE INDEX idx_agent_generator_registrations_agent_id ON agent_generator_registrations (agent_id);
CREATE INDEX idx_agent_generator_registrations_generator_id ON agent_generator_registrations (generator_id);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(targeting);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
