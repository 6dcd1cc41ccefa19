import type { Queryable } from '@brokkr/db';
import { DEPENDENCY_COLUMNS, type DependencyRow } from './dependency-row.ts';

export interface NewDependency {
  dependentId: string;
  dependsOn: string;
  readyWhen: 'applied' | 'healthy';
  scope: 'agent' | 'fleet';
  createdBy: string;
}

/** Inserts the edge; undefined when the stack already depends on that one (the first one stands: change it by deleting it). */
export async function addDependency(db: Queryable, d: NewDependency): Promise<DependencyRow | undefined> {
  const { rows } = await db.query<DependencyRow>(
    `INSERT INTO stack_dependencies (stack_id, depends_on, ready_when, scope, created_by)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (stack_id, depends_on) DO NOTHING
     RETURNING ${DEPENDENCY_COLUMNS}`,
    [d.dependentId, d.dependsOn, d.readyWhen, d.scope, d.createdBy],
  );
  return rows[0];
}
