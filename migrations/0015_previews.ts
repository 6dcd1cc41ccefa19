import type { Knex } from 'knex';

// Fleet-wide diff preview (ADR 0022). A preview is proposed YAML for a stack that
// is never served as target state: the agents targeted at creation (one preview_agents row each)
// fetch it, run a server-side dry-run apply against their cluster and report one result each.
// A preview is handed out until expires_at; an agent that has not reported by then shows `expired`.

const tables = `
CREATE TABLE previews (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  yaml_content text NOT NULL,
  is_deletion_marker boolean NOT NULL DEFAULT false,
  created_by varchar(255),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  expires_at timestamptz NOT NULL
);
CREATE INDEX idx_previews_stack_id ON previews (stack_id, created_at DESC);

-- status: pending until the agent reports, then its verdict (clean, changes or error).
CREATE TABLE preview_agents (
  preview_id uuid NOT NULL REFERENCES previews (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  status varchar(10) NOT NULL DEFAULT 'pending',
  result jsonb,
  reported_at timestamptz,
  PRIMARY KEY (preview_id, agent_id),
  CONSTRAINT valid_preview_agent_status CHECK (status IN ('pending', 'clean', 'changes', 'error'))
);
CREATE INDEX idx_preview_agents_pending ON preview_agents (agent_id) WHERE status = 'pending';
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(tables);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
