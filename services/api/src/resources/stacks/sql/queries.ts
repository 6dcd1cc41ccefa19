import { prepared, type Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackRow } from './stack-row.ts';

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

// Prepared (one statement per lock mode): every stack and deployment-object request starts here.
const liveStackStatements = {
  none: prepared('brokkr_live_stack', `SELECT ${STACK_COLUMNS} FROM stacks WHERE id = $1 AND deleted_at IS NULL`),
  share: prepared('brokkr_live_stack_share', `SELECT ${STACK_COLUMNS} FROM stacks WHERE id = $1 AND deleted_at IS NULL FOR SHARE`),
  update: prepared('brokkr_live_stack_update', `SELECT ${STACK_COLUMNS} FROM stacks WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`),
};

/**
 * A live stack. `lock` is for writes that depend on the stack staying live until they commit:
 * `share` blocks a concurrent soft delete (an UPDATE) but not other readers or inserts of
 * dependent rows; `update` is for the writes that change the stack row itself.
 */
export async function findLiveStack(db: Queryable, id: string, lock?: 'share' | 'update'): Promise<StackRow | undefined> {
  const { rows } = await db.query<StackRow>(liveStackStatements[lock ?? 'none']([id]));
  return rows[0];
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

/** An explicit agent_targets row: the only way an agent may read a stack's metadata and objects. */
export async function agentHasHardTarget(db: Queryable, agentId: string, stackId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM agent_targets WHERE agent_id = $1 AND stack_id = $2', [agentId, stackId]);
  return rows.length > 0;
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
