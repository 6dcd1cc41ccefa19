import type { Knex } from 'knex';

// Registration is two-sided consent (docs/security.md). An agent that registers itself with a
// generator only asks: the request waits here, and gives the agent nothing, until that generator
// or an admin approves it. Approval moves the pair into agent_generator_registrations, so that
// table keeps meaning "both sides agreed" and every reader of it (the association rule of
// services/api/src/domain/association.ts, brokkr_stack_agents() of migration
// 0014, the fleet and console filters) stays as it is. Registrations that exist when this runs
// were made under the old rule and are kept: dropping them would make their agents prune what
// they run.

const requests = `
CREATE TABLE agent_registration_requests (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  generator_id uuid NOT NULL REFERENCES generators (id) ON DELETE CASCADE,
  requested_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, generator_id)
);
CREATE INDEX idx_agent_registration_requests_generator_id ON agent_registration_requests (generator_id);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(requests);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
