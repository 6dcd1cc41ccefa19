import type { Knex } from 'knex';

// Deployment objects (immutable, globally sequenced), agent events, and the v1 soft-delete and
// hard-delete cascades that tie them to stacks, generators and agents.

// Trigger functions below pin the search path they were created under (SET search_path FROM
// CURRENT), so a trigger always writes to its own tenant's tables whatever the firing session's
// search path is. Pin the concrete schema rather than "$user": a later schema named after the
// database user must not capture the public tenant's triggers. SET LOCAL: knex runs the
// migrations inside a transaction.
const pinSearchPath = `SELECT set_config('search_path', quote_ident(current_schema()) || ', public', true)`;

const tables = `
-- sequence_id is one global counter across all stacks: "latest object of a stack" is the
-- live row with the highest sequence_id.
CREATE TABLE deployment_objects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  deleted_at timestamptz,
  sequence_id bigserial UNIQUE,
  stack_id uuid NOT NULL REFERENCES stacks (id),
  yaml_content text NOT NULL,
  yaml_checksum text NOT NULL,
  submitted_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  is_deletion_marker boolean NOT NULL DEFAULT false
);
CREATE INDEX idx_deployment_objects_id ON deployment_objects (id);
CREATE INDEX idx_deployment_objects_stack_id ON deployment_objects (stack_id);
CREATE INDEX idx_deployment_objects_yaml_checksum ON deployment_objects (yaml_checksum);
CREATE INDEX idx_deployment_objects_deleted_at ON deployment_objects (deleted_at);
CREATE INDEX idx_deployment_objects_is_deletion_marker ON deployment_objects (is_deletion_marker);
-- Target state: the latest live object per stack.
CREATE INDEX idx_deployment_objects_live_stack_sequence ON deployment_objects (stack_id, sequence_id DESC)
  WHERE deleted_at IS NULL;
CREATE TRIGGER update_deployment_objects_timestamp BEFORE UPDATE ON deployment_objects
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE TABLE agent_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  deleted_at timestamptz,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  deployment_object_id uuid NOT NULL REFERENCES deployment_objects (id),
  event_type varchar(50) NOT NULL,
  status varchar(10) NOT NULL,
  message text
);
CREATE INDEX idx_agent_events_id ON agent_events (id);
CREATE INDEX idx_agent_events_agent_id ON agent_events (agent_id);
CREATE INDEX idx_agent_events_deployment_object_id ON agent_events (deployment_object_id);
CREATE INDEX idx_agent_events_event_type ON agent_events (event_type);
CREATE INDEX idx_agent_events_status ON agent_events (status);
CREATE INDEX idx_agent_events_created_at ON agent_events (created_at);
CREATE INDEX idx_agent_events_deleted_at ON agent_events (deleted_at);
-- Incremental target state: "has this agent any live event for this object".
CREATE INDEX idx_agent_events_live_agent_object ON agent_events (agent_id, deployment_object_id)
  WHERE deleted_at IS NULL;
CREATE TRIGGER update_agent_events_timestamp BEFORE UPDATE ON agent_events
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();
`;

// Deployment objects are immutable. Allowed: hard DELETE (only reached through the stack
// hard-delete cascade), a soft delete, and rewriting a deletion marker.
const immutability = `
CREATE FUNCTION prevent_deployment_object_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  IF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
    RETURN NEW;
  END IF;
  IF OLD.is_deletion_marker AND NEW.is_deletion_marker THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'Deployment objects cannot be modified except for soft deletion or updating deletion markers';
END;
$$;
CREATE TRIGGER prevent_deployment_object_update BEFORE UPDATE ON deployment_objects
  FOR EACH ROW EXECUTE FUNCTION prevent_deployment_object_changes();
CREATE TRIGGER prevent_deployment_object_delete BEFORE DELETE ON deployment_objects
  FOR EACH ROW EXECUTE FUNCTION prevent_deployment_object_changes();
`;

const softDeletes = `
-- A soft-deleted stack retires its objects and gets one live deletion marker (next sequence_id).
CREATE FUNCTION handle_stack_soft_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE deployment_objects SET deleted_at = NEW.deleted_at
   WHERE stack_id = NEW.id AND deleted_at IS NULL;
  INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, submitted_at, is_deletion_marker)
  VALUES (NEW.id, '', md5(''), NEW.deleted_at, true);
  RETURN NEW;
END;
$$;
CREATE TRIGGER trigger_handle_stack_soft_delete AFTER UPDATE OF deleted_at ON stacks
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
  EXECUTE FUNCTION handle_stack_soft_delete();

-- Order matters: soft-deleting the stacks first fires the stack trigger (markers), and the
-- second statement then retires every live object of those stacks, the fresh markers included.
CREATE FUNCTION cascade_soft_delete_generators() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE stacks SET deleted_at = NEW.deleted_at
   WHERE generator_id = NEW.id AND deleted_at IS NULL;
  UPDATE deployment_objects SET deleted_at = NEW.deleted_at
   WHERE stack_id IN (SELECT id FROM stacks WHERE generator_id = NEW.id) AND deleted_at IS NULL;
  RETURN NEW;
END;
$$;
CREATE TRIGGER cascade_soft_delete_generators AFTER UPDATE OF deleted_at ON generators
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
  EXECUTE FUNCTION cascade_soft_delete_generators();

CREATE FUNCTION cascade_soft_delete_agents() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE agent_events SET deleted_at = NEW.deleted_at
   WHERE agent_id = NEW.id AND deleted_at IS NULL;
  RETURN NEW;
END;
$$;
CREATE TRIGGER cascade_soft_delete_agents AFTER UPDATE OF deleted_at ON agents
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
  EXECUTE FUNCTION cascade_soft_delete_agents();
`;

// Hard deletes are not reachable from the API (admin tooling and retention only). agent_events
// has no ON DELETE on its object FK, so the events must go before the objects.
const hardDeletes = `
CREATE FUNCTION handle_stack_hard_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM agent_targets WHERE stack_id = OLD.id;
  DELETE FROM agent_events
   WHERE deployment_object_id IN (SELECT id FROM deployment_objects WHERE stack_id = OLD.id);
  DELETE FROM deployment_objects WHERE stack_id = OLD.id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER trigger_stack_hard_delete BEFORE DELETE ON stacks
  FOR EACH ROW EXECUTE FUNCTION handle_stack_hard_delete();

CREATE FUNCTION handle_agent_hard_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM agent_targets WHERE agent_id = OLD.id;
  DELETE FROM agent_events WHERE agent_id = OLD.id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER trigger_agent_hard_delete BEFORE DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION handle_agent_hard_delete();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(pinSearchPath);
  await knex.raw(tables);
  await knex.raw(immutability);
  await knex.raw(softDeletes);
  await knex.raw(hardDeletes);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
