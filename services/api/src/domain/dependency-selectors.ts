/**
 * Dependencies by selector (migration 0031, docs/dependencies.md): which stacks a selector row
 * matches, as SQL fragments for domain/stack-dependencies.ts (readiness, whom a report concerns,
 * reverse-order deletion) and for the graph's cycle check. One spelling of "matches":
 *
 *   the stack carries every label of the selector, it is not the selector's own stack, and the
 *   selector was written by the admin (generator_id NULL: any stack) or by the generator owning
 *   the stack (a generator's selector matches only the stacks it may read: its own).
 *
 * Whether the stack is live is the caller's to say: readiness and cycles count live stacks only
 * (a deleted stack leaves the selection), reverse-order deletion asks who depended on a stack
 * that is now deleted.
 */

/**
 * SQL condition: selector row `sel` matches the stacks row `stack` (aliases). One probe of the
 * stack_labels (stack_id, label) unique index per label of the selector.
 */
export function selectorMatchesSql(sel: string, stack: string): string {
  return `(${stack}.id <> ${sel}.stack_id
      AND (${sel}.generator_id IS NULL OR ${sel}.generator_id = ${stack}.generator_id)
      AND (SELECT count(*) FROM stack_labels ml
            WHERE ml.stack_id = ${stack}.id AND ml.label = ANY (${sel}.labels)) = cardinality(${sel}.labels))`;
}

/** The live stacks selector row `sel` matches, as rows of `id`: driven by stack_labels(label) from the selector's first label. */
export function selectedStacksSql(sel: string): string {
  return `SELECT ms.id FROM stack_labels ml0 JOIN stacks ms ON ms.id = ml0.stack_id
           WHERE ml0.label = ${sel}.labels[1] AND ms.deleted_at IS NULL AND ${selectorMatchesSql(sel, 'ms')}`;
}

/**
 * The stacks depending on stack `stack` (an SQL uuid expression), deleted or not, as rows of
 * `(stack_id, scope)`: directly (stack_dependencies(depends_on)) or through a selector matching it
 * (the GIN index on the selectors' labels finds those whose labels the stack all carries).
 */
export function dependentsOfSql(stack: string): string {
  return `SELECT sd.stack_id, sd.scope FROM stack_dependencies sd WHERE sd.depends_on = ${stack}
          UNION ALL
          SELECT ss.stack_id, ss.scope FROM stacks ds
            JOIN stack_dependency_selectors ss
              ON ss.labels <@ ARRAY(SELECT dl.label FROM stack_labels dl WHERE dl.stack_id = ds.id)::text[]
           WHERE ds.id = ${stack} AND ${selectorMatchesSql('ss', 'ds')}`;
}
