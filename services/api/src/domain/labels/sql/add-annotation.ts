import type { Queryable } from '@brokkr/db';
import type { LabelOwner } from '../owners.ts';
import type { AnnotationRow } from './queries.ts';

/** One value per key: a second one for the same key is a unique violation (409). */
export async function insertAnnotation(
  db: Queryable,
  owner: LabelOwner,
  ownerId: string,
  { key, value }: { key: string; value: string },
): Promise<AnnotationRow> {
  const { rows } = await db.query<AnnotationRow>(
    `INSERT INTO ${owner.annotationTable} (${owner.ownerColumn}, key, value) VALUES ($1, $2, $3) RETURNING ${owner.annotationColumns}`,
    [ownerId, key, value],
  );
  return rows[0]!;
}
