import type { Queryable } from '@brokkr/db';

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

/**
 * The stacks whose selectors the label `label` of stack `stackId` decides: selectors carrying the
 * label whose other labels the stack carries (with `label` counted as carried, so a removal finds
 * the selectors that matched before it), in scope for the stack. Run in the write's transaction.
 */
export async function selectorsDecidedByLabel(db: Queryable, stackId: string, label: string): Promise<string[]> {
  const { rows } = await db.query<{ stack_id: string }>(
    `SELECT DISTINCT ss.stack_id FROM stacks t
       JOIN stack_dependency_selectors ss ON ss.labels @> ARRAY[$2::text]
      WHERE t.id = $1 AND ss.stack_id <> t.id
        AND (ss.generator_id IS NULL OR ss.generator_id = t.generator_id)
        AND ss.labels <@ (ARRAY(SELECT sl.label FROM stack_labels sl WHERE sl.stack_id = t.id)::text[] || $2::text)
      ORDER BY ss.stack_id`,
    [stackId, label],
  );
  return rows.map((r) => r.stack_id);
}

/** The stacks whose selectors match live stack `stackId` now (after a label was added to it). */
export async function stacksSelecting(db: Queryable, stackId: string): Promise<string[]> {
  const { rows } = await db.query<{ stack_id: string }>(
    `SELECT DISTINCT ss.stack_id FROM stacks t JOIN stack_dependency_selectors ss ON ${selectorMatchesSql('ss', 't')}
      WHERE t.id = $1 AND t.deleted_at IS NULL ORDER BY ss.stack_id`,
    [stackId],
  );
  return rows.map((r) => r.stack_id);
}
