import type { Queryable } from '@brokkr/db';

/**
 * Takes the dependency graph's lock until the transaction ends. A cycle is refused by reading the
 * graph before inserting an edge; two writes that each add half of a cycle (A→B and B→A at once)
 * would each read a graph without the other's edge, so every edge insert holds this one
 * transaction-level advisory lock from its check to its commit. Removing an edge cannot close a
 * cycle and takes no lock. The key names the schema: advisory locks are per database.
 */
export async function lockDependencyGraph(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('brokkr.stack_dependencies.' || current_schema(), 0))`);
}
