import type { Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackRow } from '../../../domain/stack-row.ts';

/** The read-only statements of stacks, their labels and annotations. */

export interface StackLabelRow {
  id: string;
  stack_id: string;
  label: string;
}

export interface StackAnnotationRow {
  id: string;
  stack_id: string;
  key: string;
  value: string;
}

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

export async function listStackLabels(db: Queryable, stackId: string): Promise<StackLabelRow[]> {
  const { rows } = await db.query<StackLabelRow>('SELECT id, stack_id, label FROM stack_labels WHERE stack_id = $1 ORDER BY label', [
    stackId,
  ]);
  return rows;
}

export async function listStackAnnotations(db: Queryable, stackId: string): Promise<StackAnnotationRow[]> {
  const { rows } = await db.query<StackAnnotationRow>(
    'SELECT id, stack_id, key, value FROM stack_annotations WHERE stack_id = $1 ORDER BY key',
    [stackId],
  );
  return rows;
}
