import type { Knex } from 'knex';

// Core identities: agents, generators, stacks (with their labels/annotations), the admin role
// and the first-run marker. Table and constraint names follow Brokkr v1 exactly, because the API
// reports a violated constraint's name in `details.constraint`.

const functions = `
CREATE FUNCTION update_timestamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at = CURRENT_TIMESTAMP;
  RETURN NEW;
END;
$$;

-- Kept for parity with Brokkr v1, where it exists but is attached to nothing.
CREATE FUNCTION soft_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.deleted_at = CURRENT_TIMESTAMP;
  RETURN NEW;
END;
$$;
`;

const agents = `
CREATE TABLE agents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  deleted_at timestamptz,
  name varchar(255) NOT NULL,
  cluster_name varchar(255) NOT NULL,
  last_heartbeat timestamptz,
  status varchar(50) NOT NULL DEFAULT 'INACTIVE',
  pak_hash text NOT NULL DEFAULT '',
  k8s_reachable boolean,
  k8s_api_latency_ms integer,
  k8s_reported_at timestamptz
);
CREATE UNIQUE INDEX unique_agent_cluster ON agents (name, cluster_name) WHERE deleted_at IS NULL;
CREATE INDEX idx_agents_id ON agents (id);
CREATE INDEX idx_agents_name ON agents (name);
CREATE INDEX idx_agents_cluster_name ON agents (cluster_name);
CREATE INDEX idx_agents_status ON agents (status);
CREATE INDEX idx_agents_deleted_at ON agents (deleted_at);
CREATE INDEX idx_agents_pak_hash ON agents (pak_hash)
  WHERE deleted_at IS NULL AND pak_hash IS NOT NULL AND pak_hash <> '';
CREATE TRIGGER update_agents_timestamp BEFORE UPDATE ON agents
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE TABLE agent_labels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  label varchar(64) NOT NULL,
  UNIQUE (agent_id, label)
);
CREATE INDEX idx_agent_labels_agent_id ON agent_labels (agent_id);
CREATE INDEX idx_agent_labels_label ON agent_labels (label);

CREATE TABLE agent_annotations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  key varchar(64) NOT NULL,
  value varchar(64) NOT NULL,
  UNIQUE (agent_id, key)
);
CREATE INDEX idx_agent_annotations_agent_id ON agent_annotations (agent_id);
CREATE INDEX idx_agent_annotations_key ON agent_annotations (key);
`;

const generatorsAndStacks = `
CREATE TABLE generators (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  deleted_at timestamptz,
  name varchar(255) NOT NULL,
  description text,
  pak_hash text,
  last_active_at timestamptz,
  is_active boolean NOT NULL DEFAULT true,
  is_system boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX unique_generator_name ON generators (name) WHERE deleted_at IS NULL;
CREATE INDEX idx_generators_name ON generators (name);
CREATE INDEX idx_generators_deleted_at ON generators (deleted_at);
CREATE INDEX idx_generators_pak_hash ON generators (pak_hash) WHERE deleted_at IS NULL AND pak_hash IS NOT NULL;
CREATE TRIGGER update_generators_timestamp BEFORE UPDATE ON generators
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

-- Stack names are unique across all generators (v1 behaviour), among live rows only.
CREATE TABLE stacks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  deleted_at timestamptz,
  name varchar(255) NOT NULL,
  description text,
  generator_id uuid NOT NULL REFERENCES generators (id)
);
CREATE UNIQUE INDEX unique_stack_name ON stacks (name) WHERE deleted_at IS NULL;
CREATE INDEX idx_stacks_id ON stacks (id);
CREATE INDEX idx_stacks_name ON stacks (name);
CREATE INDEX idx_stacks_generator_id ON stacks (generator_id);
CREATE TRIGGER update_stacks_timestamp BEFORE UPDATE ON stacks
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE TABLE stack_labels (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  label varchar(64) NOT NULL,
  UNIQUE (stack_id, label)
);
CREATE INDEX idx_stack_labels_stack_id ON stack_labels (stack_id);
CREATE INDEX idx_stack_labels_label ON stack_labels (label);

CREATE TABLE stack_annotations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  key varchar(64) NOT NULL,
  value varchar(64) NOT NULL,
  CONSTRAINT unique_stack_annotation UNIQUE (stack_id, key)
);
CREATE INDEX idx_stack_annotations_stack_id ON stack_annotations (stack_id);
CREATE INDEX idx_stack_annotations_key ON stack_annotations (key);
-- Target state matches agent annotation pairs against stack annotation pairs.
CREATE INDEX idx_stack_annotations_key_value ON stack_annotations (key, value);
`;

const adminAndBootstrap = `
CREATE TABLE app_initialization (
  id serial PRIMARY KEY,
  initialized_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE admin_role (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  pak_hash text NOT NULL
);
CREATE INDEX idx_admin_role_id ON admin_role (id);
CREATE TRIGGER update_admin_role_timestamp BEFORE UPDATE ON admin_role
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE FUNCTION prevent_admin_role_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'Deleting from admin_role table is not allowed';
END;
$$;
CREATE TRIGGER prevent_admin_role_delete BEFORE DELETE ON admin_role
  FOR EACH ROW EXECUTE FUNCTION prevent_admin_role_delete();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(functions);
  await knex.raw(agents);
  await knex.raw(generatorsAndStacks);
  await knex.raw(adminAndBootstrap);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
