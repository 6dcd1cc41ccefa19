import type { Queryable } from '@brokkr/db';
import { selectedStacksSql } from './dependency-selectors.ts';

/**
 * The dependency graph as a whole (docs/dependencies.md): its lock and its cycle check, shared by
 * the dependency routes and the stack label routes (a label can bring a stack into a selector).
 * An edge is a direct dependency (migration 0028) or a live stack a selector matches now
 * (migration 0031).
 */

/**
 * Takes the dependency graph's lock until the transaction ends. A cycle is refused by reading the
 * graph before inserting an edge; two writes that each add half of a cycle (A→B and B→A at once)
 * would each read a graph without the other's edge, so every edge insert holds this one
 * transaction-level advisory lock from its check to its commit, and so does every stack label add
 * (a label can add selector edges). Removing an edge cannot close a cycle and takes no lock. The key names the schema: advisory locks are per database.
 */
export async function lockDependencyGraph(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('brokkr.stack_dependencies.' || current_schema(), 0))`);
}

/**
 * A path of dependencies from `from` to `to` (`from` first, `to` last), or undefined: adding the
 * edge `to → from` would close a cycle exactly when there is one. An edge is a direct dependency
 * or a live stack a selector matches now (migration 0031). The graph is acyclic (every write
 * checks this under the graph's lock, lockDependencyGraph), so the walk ends; the path array also
 * stops it on a cycle that somehow got in.
 */
export async function dependencyPath(db: Queryable, from: string, to: string): Promise<string[] | undefined> {
  const { rows } = await db.query<{ path: string[] }>(
    `WITH RECURSIVE walk(node, path) AS (
       SELECT $1::uuid, ARRAY[$1::uuid]
       UNION ALL
       SELECT e.dst, w.path || e.dst
         FROM walk w
        CROSS JOIN LATERAL (
          SELECT sd.depends_on AS dst FROM stack_dependencies sd WHERE sd.stack_id = w.node
          UNION ALL
          SELECT ms.id FROM stack_dependency_selectors ss CROSS JOIN LATERAL (${selectedStacksSql('ss')}) ms
           WHERE ss.stack_id = w.node) e
        WHERE w.node <> $2::uuid AND NOT e.dst = ANY(w.path)
     )
     SELECT path::text[] AS path FROM walk WHERE node = $2::uuid LIMIT 1`,
    [from, to],
  );
  return rows[0]?.path;
}

/** The first cycle the new edges `dependent → each of targets` would close, the dependent first and last. */
export async function cycleThrough(db: Queryable, dependent: string, targets: readonly string[]): Promise<string[] | undefined> {
  for (const target of targets) {
    const path = await dependencyPath(db, target, dependent);
    if (path) return [dependent, ...path];
  }
  return undefined;
}
