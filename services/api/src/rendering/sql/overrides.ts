import type { Queryable } from '@brokkr/db';
import type { NewOverride } from '@brokkr/contracts';

export interface OverrideRow {
  id: string;
  stack_id: string;
  name: string;
  priority: number;
  selector: NewOverride['selector'];
  values: Record<string, unknown> | null;
  patches: NonNullable<NewOverride['patches']> | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, stack_id, name, priority, selector, layer_values AS values, patches, created_at, updated_at';

export async function listOverrides(db: Queryable, stackId: string): Promise<OverrideRow[]> {
  const { rows } = await db.query<OverrideRow>(`SELECT ${COLUMNS} FROM stack_overrides WHERE stack_id = $1 ORDER BY priority, name`, [
    stackId,
  ]);
  return rows;
}

export async function insertOverride(db: Queryable, stackId: string, layer: NewOverride): Promise<OverrideRow> {
  const { rows } = await db.query<OverrideRow>(
    `INSERT INTO stack_overrides (stack_id, name, priority, selector, layer_values, patches)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [stackId, layer.name, layer.priority, JSON.stringify(layer.selector), jsonOrNull(layer.values), jsonOrNull(layer.patches)],
  );
  return rows[0]!;
}

/** Replaces the layer named `name` (possibly renaming it); undefined when there is none. */
export async function updateOverride(db: Queryable, stackId: string, name: string, layer: NewOverride): Promise<OverrideRow | undefined> {
  const { rows } = await db.query<OverrideRow>(
    `UPDATE stack_overrides SET name = $3, priority = $4, selector = $5, layer_values = $6, patches = $7, updated_at = now()
      WHERE stack_id = $1 AND name = $2 RETURNING ${COLUMNS}`,
    [stackId, name, layer.name, layer.priority, JSON.stringify(layer.selector), jsonOrNull(layer.values), jsonOrNull(layer.patches)],
  );
  return rows[0];
}

export async function deleteOverride(db: Queryable, stackId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM stack_overrides WHERE stack_id = $1 AND name = $2', [stackId, name]);
  return (rowCount ?? 0) > 0;
}

/**
 * Counts a change of the stack's layers on the stack row, if they are still at `revision`: the row
 * lock it takes orders the change with every new object of the stack (whose insert locks the row
 * FOR SHARE and checks the revision it was rendered with, migration 0026). False: they changed
 * since they were read, or the stack is gone.
 */
export async function bumpLayersRevision(db: Queryable, stackId: string, revision: number, hasLayers: boolean): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE stacks SET layers_revision = layers_revision + 1, has_layers = $3
      WHERE id = $1 AND layers_revision = $2 AND deleted_at IS NULL`,
    [stackId, revision, hasLayers],
  );
  return (rowCount ?? 0) > 0;
}

const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
