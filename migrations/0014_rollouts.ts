import type { Knex } from 'knex';

// Progressive rollouts (ADR 0016). A stack with a rollout policy does not hand a new deployment
// object to every agent at once: the insert trigger below opens a `pending` rollout in the
// inserting transaction, so from the moment the object is visible the target state serves the
// rollout's baseline to every agent that has not been released yet. maintenance's rollouts task
// assigns the targeted agents to waves, releases them wave by wave as the gates pass, and rolls
// back (released_wave = -1: everyone is served the baseline again) when one fails.

const pinSearchPath = `SELECT set_config('search_path', quote_ident(current_schema()) || ', public', true)`;

const tables = `
CREATE TABLE rollout_policies (
  stack_id uuid PRIMARY KEY REFERENCES stacks (id) ON DELETE CASCADE,
  policy jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TRIGGER update_rollout_policies_timestamp BEFORE UPDATE ON rollout_policies
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

-- status: pending (agents not assigned yet; everyone on the baseline), progressing, paused,
-- succeeded, promoted (everyone on the new object), failed (gate failed, no automatic
-- rollback: released waves keep the new object), rolled_back, aborted (everyone on the
-- baseline), superseded (a newer object started its own rollout).
CREATE TABLE rollouts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  deployment_object_id uuid NOT NULL UNIQUE REFERENCES deployment_objects (id) ON DELETE CASCADE,
  baseline_object_id uuid NOT NULL REFERENCES deployment_objects (id) ON DELETE CASCADE,
  policy jsonb NOT NULL,
  status varchar(20) NOT NULL DEFAULT 'pending',
  released_wave integer NOT NULL DEFAULT -1,
  wave_started_at timestamptz,
  wave_healthy_since timestamptz,
  message text,
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  finished_at timestamptz,
  CONSTRAINT valid_rollout_status CHECK (status IN
    ('pending', 'progressing', 'paused', 'succeeded', 'promoted', 'failed', 'rolled_back', 'aborted', 'superseded'))
);
CREATE INDEX idx_rollouts_stack_id ON rollouts (stack_id, created_at DESC);
CREATE INDEX idx_rollouts_active ON rollouts (status) WHERE status IN ('pending', 'progressing');
CREATE TRIGGER update_rollouts_timestamp BEFORE UPDATE ON rollouts
  FOR EACH ROW EXECUTE FUNCTION update_timestamp();

CREATE TABLE rollout_agents (
  rollout_id uuid NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  wave integer NOT NULL,
  PRIMARY KEY (rollout_id, agent_id)
);
`;

// Same rule as services/api/src/domain/association.ts (the stack <-> agent association), read
// from the stack side, for the rollouts task (which must know every agent a wave holds back).
// A test (services/api/test/rollout-targeting.test.ts) checks both agree.
const stackAgents = `
CREATE FUNCTION brokkr_stack_agents(p_stack uuid) RETURNS TABLE (agent_id uuid) LANGUAGE sql STABLE
SET search_path FROM CURRENT AS $$
  SELECT a.id FROM agents a
   WHERE a.deleted_at IS NULL AND a.status = 'ACTIVE' AND a.id IN (
     SELECT al.agent_id FROM stack_labels sl
       JOIN agent_labels al ON al.label = sl.label
       JOIN stacks s ON s.id = sl.stack_id
       JOIN agent_generator_registrations r ON r.agent_id = al.agent_id AND r.generator_id = s.generator_id
      WHERE sl.stack_id = p_stack
     UNION
     SELECT aa.agent_id FROM stack_annotations sa
       JOIN agent_annotations aa ON aa.key = sa.key AND aa.value = sa.value
       JOIN stacks s ON s.id = sa.stack_id
       JOIN agent_generator_registrations r ON r.agent_id = aa.agent_id AND r.generator_id = s.generator_id
      WHERE sa.stack_id = p_stack
     UNION
     SELECT t.agent_id FROM agent_targets t WHERE t.stack_id = p_stack)
$$;
`;

// Opening the rollout in the inserting transaction is what makes "no agent sees the new object
// before its wave" hold whatever path created the object (API, template, a future one). The
// baseline is what the agents not yet released were being served: the previous object, unless
// that object's own rollout had not finished (running, failed, rolled back, aborted), whose
// baseline it then inherits. The first object of a stack has no baseline and goes to
// everyone. Without a policy, a running rollout is superseded and the object goes to everyone.
const insertTrigger = `
CREATE FUNCTION start_rollout_on_new_object() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
  v_policy jsonb;
  v_previous uuid;
  v_last rollouts%ROWTYPE;
  v_baseline uuid;
BEGIN
  SELECT * INTO v_last FROM rollouts WHERE stack_id = NEW.stack_id ORDER BY created_at DESC LIMIT 1 FOR UPDATE;
  UPDATE rollouts SET status = 'superseded', finished_at = now(),
         message = 'a newer deployment object replaced this one'
   WHERE id = v_last.id AND status IN ('pending', 'progressing', 'paused');
  SELECT policy INTO v_policy FROM rollout_policies WHERE stack_id = NEW.stack_id;
  IF NOT FOUND THEN
    RETURN NEW;
  END IF;
  SELECT id INTO v_previous FROM deployment_objects
   WHERE stack_id = NEW.stack_id AND deleted_at IS NULL AND NOT is_deletion_marker AND sequence_id < NEW.sequence_id
   ORDER BY sequence_id DESC LIMIT 1;
  IF v_previous IS NULL THEN
    RETURN NEW;
  END IF;
  -- v_last holds the status from before the UPDATE above.
  v_baseline := CASE
    WHEN v_last.deployment_object_id = v_previous AND v_last.status NOT IN ('succeeded', 'promoted') THEN v_last.baseline_object_id
    ELSE v_previous
  END;
  INSERT INTO rollouts (stack_id, deployment_object_id, baseline_object_id, policy)
  VALUES (NEW.stack_id, NEW.id, v_baseline, v_policy);
  RETURN NEW;
END;
$$;
CREATE TRIGGER trigger_start_rollout AFTER INSERT ON deployment_objects
  FOR EACH ROW WHEN (NOT NEW.is_deletion_marker) EXECUTE FUNCTION start_rollout_on_new_object();
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(pinSearchPath);
  await knex.raw(tables);
  await knex.raw(stackAgents);
  await knex.raw(insertTrigger);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
