import type { Queryable } from '@brokkr/db';
import type { LabelOwner } from '../owners.ts';

/** The removed annotation's value (whom the removal wakes can depend on it), or undefined when there was none. */
export async function deleteAnnotation(db: Queryable, owner: LabelOwner, ownerId: string, key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ value: string }>(
    `DELETE FROM ${owner.annotationTable} WHERE ${owner.ownerColumn} = $1 AND key = $2 RETURNING value`,
    [ownerId, key],
  );
  return rows[0]?.value;
}
