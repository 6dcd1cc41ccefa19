import type { Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackFields, type StackRow } from '../../../domain/stack-row.ts';

/** Brokkr's PUT writes the description only when one is given. Undefined when the generator is not live. */
export async function updateStack(db: Queryable, id: string, fields: StackFields): Promise<StackRow | undefined> {
  const { rows } = await db.query<StackRow>(
    `UPDATE stacks SET name = $2, description = COALESCE($3, description), generator_id = $4
      WHERE id = $1 AND deleted_at IS NULL
        AND EXISTS (SELECT 1 FROM generators g WHERE g.id = $4 AND g.deleted_at IS NULL)
      RETURNING ${STACK_COLUMNS}`,
    [id, fields.name, fields.description, fields.generatorId],
  );
  return rows[0];
}
