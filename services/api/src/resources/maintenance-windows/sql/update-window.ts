import type { Queryable } from '@brokkr/db';
import { WINDOW_COLUMNS, type WindowFields, type WindowRow } from './window-row.ts';

/** Replaces every field of the window (the route merged the change into the stored row). */
export async function updateWindow(db: Queryable, id: string, fields: WindowFields): Promise<WindowRow> {
  const { rows } = await db.query<WindowRow>(
    `UPDATE maintenance_windows
        SET name = $2, type = $3, rrule = $4, duration_seconds = $5, agent_labels = $6, stack_ids = $7, generator_ids = $8,
            gates = $9, updated_at = now()
      WHERE id = $1 RETURNING ${WINDOW_COLUMNS}`,
    [
      id,
      fields.name,
      fields.type,
      fields.rrule,
      fields.duration_seconds,
      fields.agent_labels,
      fields.stack_ids,
      fields.generator_ids,
      fields.gates,
    ],
  );
  return rows[0]!;
}
