import type { Queryable } from '@brokkr/db';
import type { StackLabelRow } from './queries.ts';

/** A duplicate is a unique violation (409). */
export async function insertStackLabel(db: Queryable, stackId: string, label: string): Promise<StackLabelRow> {
  const { rows } = await db.query<StackLabelRow>(
    'INSERT INTO stack_labels (stack_id, label) VALUES ($1, $2) RETURNING id, stack_id, label',
    [stackId, label],
  );
  return rows[0]!;
}
