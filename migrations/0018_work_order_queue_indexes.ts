import type { Knex } from 'knex';

// A work order is a queue row: inserted, claimed (an UPDATE of `status`, which no
// index lets be HOT), then deleted into work_order_log. Every index of the queue tables is
// written at each of those steps, and its dead entries stay until vacuum reaches them. These
// serve no query (each checked against the SQL in services/ and migrations/):
//
// - work_orders (status), (work_type): every query on the queue names one status, and each
//   status has its own partial index (pending_type, stale_claims, retry); the queue itself is
//   small by design, so the admin list by work_type scans it.
// - work_orders (last_error_at) WHERE last_error IS NOT NULL: nothing orders or filters by it.
// - work_order_targets / _labels / _annotations (work_order_id): the UNIQUE constraint's index
//   starts with work_order_id and serves the same lookups (and the ON DELETE CASCADE).
// - work_order_log (work_type): (work_type, completed_at DESC) starts with it; (success): a
//   boolean, filtered only together with an ordering on completed_at.
//
// An order with one explicit target (bench:api's) writes 19 index entries before, 12 after.
// pgbench, the SQL of create + claim + completion on one server, 2 clients, 30 s runs in the
// order after/before/before/after (twice): WAL per order 2,079–2,399 bytes after, 2,597–2,839
// before (-18 %); throughput within this machine's noise (2,300–4,000 orders/s either way).
const indexes = `
DROP INDEX idx_work_orders_status;
DROP INDEX idx_work_orders_work_type;
DROP INDEX idx_work_orders_last_error_at;
DROP INDEX idx_work_order_targets_work_order_id;
DROP INDEX idx_work_order_labels_work_order_id;
DROP INDEX idx_work_order_annotations_work_order_id;
DROP INDEX idx_work_order_log_work_type;
DROP INDEX idx_work_order_log_success;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(indexes);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
