import type { Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackRow } from '../../../domain/stack-row.ts';

/** The read-only statements of stacks (their labels and annotations: domain/labels/). */

/** Live stacks, all of them or those of one generator (Brokkr returns them unordered; we sort by name). */
export async function listLiveStacks(db: Queryable, generatorId: string | null): Promise<StackRow[]> {
  const { rows } = await db.query<StackRow>(
    `SELECT ${STACK_COLUMNS} FROM stacks
      WHERE deleted_at IS NULL AND ($1::uuid IS NULL OR generator_id = $1)
      ORDER BY name, id`,
    [generatorId],
  );
  return rows;
}
