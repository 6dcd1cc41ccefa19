import type { Knex } from 'knex';

// Issue 12 (ADR 0027): what PostgreSQL does for every deployment object and agent event.
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

export async function up(knex: Knex): Promise<void> {
  await knex.raw(indexes);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
