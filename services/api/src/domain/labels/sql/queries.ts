import type { Queryable } from '@brokkr/db';
import type { LabelOwner } from '../owners.ts';

/** A label row: `id`, the owner's id column (`agent_id`, …), `label`, and for templates `created_at`. */
export interface LabelRow {
  id: string;
  label: string;
  [ownerColumnOrStamp: string]: unknown;
}

/** An annotation row: `id`, the owner's id column, `key`, `value`, and for templates `created_at`. */
export interface AnnotationRow {
  id: string;
  key: string;
  value: string;
  [ownerColumnOrStamp: string]: unknown;
}

/** Sorted by label (Brokkr returns them unordered); an unknown owner has none. */
export async function listLabels(db: Queryable, owner: LabelOwner, ownerId: string): Promise<LabelRow[]> {
  const { rows } = await db.query<LabelRow>(
    `SELECT ${owner.labelColumns} FROM ${owner.labelTable} WHERE ${owner.ownerColumn} = $1 ORDER BY label`,
    [ownerId],
  );
  return rows;
}

/** Sorted by key (one value per key). */
export async function listAnnotations(db: Queryable, owner: LabelOwner, ownerId: string): Promise<AnnotationRow[]> {
  const { rows } = await db.query<AnnotationRow>(
    `SELECT ${owner.annotationColumns} FROM ${owner.annotationTable} WHERE ${owner.ownerColumn} = $1 ORDER BY key`,
    [ownerId],
  );
  return rows;
}
