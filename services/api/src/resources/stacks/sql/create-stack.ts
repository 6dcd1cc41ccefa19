import type { Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackFields, type StackRow } from '../../../domain/stack-row.ts';

/**
 * Inserts a stack under a LIVE generator; undefined when the generator does not exist or is
 * deleted (a stack under a deleted generator would escape the generator's delete cascade).
 */
export async function insertStack(db: Queryable, fields: StackFields): Promise<StackRow | undefined> {
  const { rows } = await db.query<StackRow>(
    `INSERT INTO stacks (name, description, generator_id, expires_at)
     SELECT $1, $2, g.id, $4 FROM generators g WHERE g.id = $3 AND g.deleted_at IS NULL
     RETURNING ${STACK_COLUMNS}`,
    [fields.name, fields.description, fields.generatorId, fields.expiresAt ?? null],
  );
  return rows[0];
}
