import type { Knex } from 'knex';

// ADR 0027: what PostgreSQL does for every deployment object and agent event.
//
// 1. The wake list of a new deployment object matches the stack's annotations against
//    agent_annotations by (key, value); only `key` was indexed, and one key shared by the whole
//    fleet (an `env`, a `zone`) made that a scan of every agent's annotation, on every POST.
//    (key, value) serves key-only lookups too, so it replaces the key index.
// 2. Every INSERT maintains every index of its table: deployment_objects had 8 and agent_events
//    9, of which these serve no query (each was checked against the SQL in services/ and
//    migrations/): a copy of the primary key (`id`), single-column indexes on booleans and
//    low-cardinality columns (is_deletion_marker, event_type, status, deleted_at: the queries
//    filter on them only together with a selective column, and the partial indexes
//    `... WHERE deleted_at IS NULL` serve "live rows of a stack / of an agent") and yaml_checksum
//    (nothing looks objects up by checksum). Dropping them takes 4 index inserts (B-tree descent,
//    dirtied leaf page, WAL record) off each write.
// 3. The rollout trigger (0014, fast path 0016) runs for every deployment object. Its
//    `SET search_path FROM CURRENT` made every call save, set and restore the search_path GUC,
//    which also throws away the session's cached namespace lookup: ~40 % of the trigger's cost
//    for a stack with neither policy nor rollout (7 of ~17 µs per insert, measured in a plpgsql
//    loop). The function below is the same logic with every table named with the schema it is
//    created in, which pins the tenant just as well (only pg_catalog builtins stay unqualified,
//    and pg_catalog is always searched first).
const indexes = `
CREATE INDEX idx_agent_annotations_key_value ON agent_annotations (key, value);
DROP INDEX idx_agent_annotations_key;

DROP INDEX idx_deployment_objects_id;
DROP INDEX idx_deployment_objects_yaml_checksum;
DROP INDEX idx_deployment_objects_deleted_at;
DROP INDEX idx_deployment_objects_is_deletion_marker;

DROP INDEX idx_agent_events_id;
DROP INDEX idx_agent_events_event_type;
DROP INDEX idx_agent_events_status;
DROP INDEX idx_agent_events_deleted_at;
`;

function rolloutTrigger(schema: string): string {
  const t = (table: string) => `${schema}.${table}`;
  return `
CREATE OR REPLACE FUNCTION ${t('start_rollout_on_new_object')}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_policy jsonb;
  v_has_rollouts boolean;
  v_previous uuid;
  v_last ${t('rollouts')}%ROWTYPE;
  v_baseline uuid;
BEGIN
  SELECT (SELECT p.policy FROM ${t('rollout_policies')} p WHERE p.stack_id = NEW.stack_id),
         EXISTS (SELECT 1 FROM ${t('rollouts')} r WHERE r.stack_id = NEW.stack_id)
    INTO v_policy, v_has_rollouts;
  IF v_policy IS NULL AND NOT v_has_rollouts THEN
    RETURN NEW;
  END IF;
  SELECT * INTO v_last FROM ${t('rollouts')} WHERE stack_id = NEW.stack_id ORDER BY created_at DESC LIMIT 1 FOR UPDATE;
  UPDATE ${t('rollouts')} SET status = 'superseded', finished_at = now(),
         message = 'a newer deployment object replaced this one'
   WHERE id = v_last.id AND status IN ('pending', 'progressing', 'paused');
  IF v_policy IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT id INTO v_previous FROM ${t('deployment_objects')}
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
  INSERT INTO ${t('rollouts')} (stack_id, deployment_object_id, baseline_object_id, policy)
  VALUES (NEW.stack_id, NEW.id, v_baseline, v_policy);
  RETURN NEW;
END;
$$;
`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(indexes);
  // The schema knex migrates (its searchPath puts the tenant's first), as an SQL identifier.
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>('SELECT quote_ident(current_schema()) AS schema');
  await knex.raw(rolloutTrigger(rows[0]!.schema));
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
