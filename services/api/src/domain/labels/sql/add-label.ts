import type { Queryable } from '@brokkr/db';
import type { LabelOwner } from '../owners.ts';
import type { LabelRow } from './queries.ts';

/** A duplicate is a unique violation (409); an owner id that never existed, a foreign-key violation (422). */
export async function insertLabel(db: Queryable, owner: LabelOwner, ownerId: string, label: string): Promise<LabelRow> {
  const { rows } = await db.query<LabelRow>(
    `INSERT INTO ${owner.labelTable} (${owner.ownerColumn}, label) VALUES ($1, $2) RETURNING ${owner.labelColumns}`,
    [ownerId, label],
  );
  return rows[0]!;
}
