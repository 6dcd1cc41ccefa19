import type { OverrideRow } from '../../rendering/sql/overrides.ts';

/** A layer as clients read it (its values under `values`; the column is layer_values). */
export function overrideJson(row: OverrideRow) {
  return {
    id: row.id,
    stack_id: row.stack_id,
    name: row.name,
    priority: row.priority,
    selector: row.selector,
    values: row.values,
    patches: row.patches,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
