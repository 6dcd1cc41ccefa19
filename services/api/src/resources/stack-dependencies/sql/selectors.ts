import type { Queryable } from '@brokkr/db';
import { selectedStacksSql } from '../../../domain/dependency-selectors.ts';

/** A stack_dependency_selectors row as the API shows it (migration 0031). */
export interface SelectorDependencyRow {
  id: string;
  selector: { labels: string[] };
  dependent_id: string;
  ready_when: 'applied' | 'healthy';
  scope: 'agent' | 'fleet';
  created_at: Date;
  created_by: string;
}

const SELECTOR_COLUMNS =
  "id, json_build_object('labels', labels) AS selector, stack_id AS dependent_id, ready_when, scope, created_at, created_by";

export interface NewSelectorDependency {
  dependentId: string;
  /** Sorted, without duplicates: the unique key compares arrays. */
  labels: string[];
  /** The writing generator (its selector matches its own stacks only); null for the admin (any stack). */
  generatorId: string | null;
  readyWhen: 'applied' | 'healthy';
  scope: 'agent' | 'fleet';
  createdBy: string;
}

/** Inserts the selector dependency; undefined when the stack already has one with the same labels. */
export async function addSelectorDependency(db: Queryable, d: NewSelectorDependency): Promise<SelectorDependencyRow | undefined> {
  const { rows } = await db.query<SelectorDependencyRow>(
    `INSERT INTO stack_dependency_selectors (stack_id, labels, generator_id, ready_when, scope, created_by)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (stack_id, labels) DO NOTHING
     RETURNING ${SELECTOR_COLUMNS}`,
    [d.dependentId, d.labels, d.generatorId, d.readyWhen, d.scope, d.createdBy],
  );
  return rows[0];
}

/** The live stacks the new selector would match now, in id order (the cycle check starts from each). */
export async function stacksSelected(
  db: Queryable,
  d: Pick<NewSelectorDependency, 'dependentId' | 'labels' | 'generatorId'>,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT DISTINCT sel.id FROM (SELECT $1::uuid AS stack_id, $2::text[] AS labels, $3::uuid AS generator_id) ss
      CROSS JOIN LATERAL (${selectedStacksSql('ss')}) sel ORDER BY sel.id`,
    [d.dependentId, d.labels, d.generatorId],
  );
  return rows.map((r) => r.id);
}

/** A stack's selector dependencies, oldest first. */
export async function listSelectorDependencies(db: Queryable, stackId: string): Promise<SelectorDependencyRow[]> {
  const { rows } = await db.query<SelectorDependencyRow>(
    `SELECT ${SELECTOR_COLUMNS} FROM stack_dependency_selectors WHERE stack_id = $1 ORDER BY created_at, id`,
    [stackId],
  );
  return rows;
}

/** Removes the stack's selector dependency `id`; its labels, or undefined when there was none. */
export async function removeSelectorDependency(db: Queryable, stackId: string, id: string): Promise<string[] | undefined> {
  const { rows } = await db.query<{ labels: string[] }>(
    'DELETE FROM stack_dependency_selectors WHERE stack_id = $1 AND id = $2 RETURNING labels',
    [stackId, id],
  );
  return rows[0]?.labels;
}
