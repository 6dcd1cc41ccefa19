import type { Queryable } from '@brokkr/db';
import { WINDOW_COLUMNS, type WindowFields, type WindowRow } from './window-row.ts';

export async function createWindow(db: Queryable, fields: WindowFields, owner: string | null): Promise<WindowRow> {
  const { rows } = await db.query<WindowRow>(
    `INSERT INTO maintenance_windows (name, type, rrule, duration_seconds, agent_labels, stack_ids, generator_ids, gates, owner_generator_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${WINDOW_COLUMNS}`,
    [
      fields.name,
      fields.type,
      fields.rrule,
      fields.duration_seconds,
      fields.agent_labels,
      fields.stack_ids,
      fields.generator_ids,
      fields.gates,
      owner,
    ],
  );
  return rows[0]!;
}
