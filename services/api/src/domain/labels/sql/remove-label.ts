import type { Queryable } from '@brokkr/db';
import type { LabelOwner } from '../owners.ts';

/** Whether the label was there. */
export async function deleteLabel(db: Queryable, owner: LabelOwner, ownerId: string, label: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM ${owner.labelTable} WHERE ${owner.ownerColumn} = $1 AND label = $2`, [ownerId, label]);
  return (rowCount ?? 0) > 0;
}
