import type { Knex } from 'knex';

// After 0017 and 0018: every index left that another index of the same table already
// covers, found by asking the catalogue (pg_index) for each non-unique, non-partial index whose
// columns are a leading prefix of another's. A B-tree on (a, b) answers every lookup on (a) as
// well, including the ON DELETE CASCADE of a foreign key on a, so these serve no query and cost
// an index insert (descent, dirtied leaf page, WAL record) on every row written to their tables:
//
// - copies of primary keys: agents (id), stacks (id), admin_role (id);
// - (parent id) beside UNIQUE (parent id, …): agent_labels, agent_annotations, agent_targets,
//   agent_generator_registrations, deployment_health (a row per agent and object reported),
//   stack_labels, stack_annotations, template_labels, template_annotations, template_targets,
//   rendered_deployment_objects (its UNIQUE is on the same single column);
// - stack_annotations (key) beside (key, value).
//
// test/schema-indexes.test.ts runs the same catalogue query against the migrated schema, so a
// later migration cannot bring such a copy back unnoticed.
const indexes = `
DROP INDEX idx_agents_id;
DROP INDEX idx_stacks_id;
DROP INDEX idx_admin_role_id;
DROP INDEX idx_agent_labels_agent_id;
DROP INDEX idx_agent_annotations_agent_id;
DROP INDEX idx_agent_targets_agent_id;
DROP INDEX idx_agent_generator_registrations_agent_id;
DROP INDEX idx_deployment_health_agent_id;
DROP INDEX idx_stack_labels_stack_id;
DROP INDEX idx_stack_annotations_stack_id;
DROP INDEX idx_stack_annotations_key;
DROP INDEX idx_template_labels_template_id;
DROP INDEX idx_template_annotations_template_id;
DROP INDEX idx_template_targets_template_id;
DROP INDEX idx_rendered_deployment_objects_deployment_object_id;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(indexes);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
