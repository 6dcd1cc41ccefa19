import type { Knex } from 'knex';

// The rollout trigger of 0014 ran three statements for every deployment object, policy or not
// (bench:api: 3 of 5.1 statements per POST). Most stacks never have a policy nor a
// rollout: one statement now tells, and only stacks with either go on to the full logic.

const pinSearchPath = `SELECT set_config('search_path', quote_ident(current_schema()) || ', public', true)`;

const fastPath = `
CREATE OR REPLACE FUNCTION start_rollout_on_new_object() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
  v_policy jsonb;
  v_has_rollouts boolean;
  v_previous uuid;
  v_last rollouts%ROWTYPE;
  v_baseline uuid;
BEGIN
  SELECT (SELECT p.policy FROM rollout_policies p WHERE p.stack_id = NEW.stack_id),
         EXISTS (SELECT 1 FROM rollouts r WHERE r.stack_id = NEW.stack_id)
    INTO v_policy, v_has_rollouts;
  IF v_policy IS NULL AND NOT v_has_rollouts THEN
    RETURN NEW;
  END IF;
  SELECT * INTO v_last FROM rollouts WHERE stack_id = NEW.stack_id ORDER BY created_at DESC LIMIT 1 FOR UPDATE;
  UPDATE rollouts SET status = 'superseded', finished_at = now(),
         message = 'a newer deployment object replaced this one'
   WHERE id = v_last.id AND status IN ('pending', 'progressing', 'paused');
  IF v_policy IS NULL THEN
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
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(pinSearchPath);
  await knex.raw(fastPath);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
