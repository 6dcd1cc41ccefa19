import type { Queryable } from '@brokkr/db';

/** Returns the removed annotation's value (needed to find the agents that matched on it). */
export async function deleteStackAnnotation(db: Queryable, stackId: string, key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ value: string }>('DELETE FROM stack_annotations WHERE stack_id = $1 AND key = $2 RETURNING value', [
    stackId,
    key,
  ]);
  return rows[0]?.value;
}
