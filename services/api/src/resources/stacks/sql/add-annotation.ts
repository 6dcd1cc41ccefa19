import type { Queryable } from '@brokkr/db';
import type { StackAnnotationRow } from './queries.ts';

/** One value per key: a second one for the same key is a unique violation (409). */
export async function insertStackAnnotation(db: Queryable, stackId: string, key: string, value: string): Promise<StackAnnotationRow> {
  const { rows } = await db.query<StackAnnotationRow>(
    'INSERT INTO stack_annotations (stack_id, key, value) VALUES ($1, $2, $3) RETURNING id, stack_id, key, value',
    [stackId, key, value],
  );
  return rows[0]!;
}
