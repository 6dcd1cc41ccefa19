import { prepared, type Queryable } from '@brokkr/db';
import type { StackRow } from '../targeting/index.ts';

export type { StackRow };

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

const STACK_COLUMNS = 'id, created_at, updated_at, deleted_at, name, description, generator_id';

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

export interface StackFields {
  name: string;
  description: string | null;
  generatorId: string;
}

/**
 * Inserts a stack under a LIVE generator; undefined when the generator does not exist or is
 * deleted (a stack under a deleted generator would escape the generator's delete cascade).
 */
export async function insertStack(db: Queryable, fields: StackFields): Promise<StackRow | undefined> {
  const { rows } = await db.query<StackRow>(
    `INSERT INTO stacks (name, description, generator_id)
     SELECT $1, $2, g.id FROM generators g WHERE g.id = $3 AND g.deleted_at IS NULL
     RETURNING ${STACK_COLUMNS}`,
    [fields.name, fields.description, fields.generatorId],
  );
  return rows[0];
}

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

/** Soft delete; the stack trigger retires its objects and inserts the deletion marker. */
export async function softDeleteStack(db: Queryable, id: string): Promise<Date | undefined> {
  const { rows } = await db.query<{ deleted_at: Date }>(
    'UPDATE stacks SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING deleted_at',
    [id],
  );
  return rows[0]?.deleted_at;
}

/** An explicit agent_targets row: the only way an agent may read a stack's metadata and objects. */
export async function agentHasHardTarget(db: Queryable, agentId: string, stackId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM agent_targets WHERE agent_id = $1 AND stack_id = $2', [agentId, stackId]);
  return rows.length > 0;
}

export async function listStackLabels(db: Queryable, stackId: string): Promise<StackLabelRow[]> {
  const { rows } = await db.query<StackLabelRow>('SELECT id, stack_id, label FROM stack_labels WHERE stack_id = $1 ORDER BY label', [stackId]);
  return rows;
}

export async function insertStackLabel(db: Queryable, stackId: string, label: string): Promise<StackLabelRow> {
  const { rows } = await db.query<StackLabelRow>(
    'INSERT INTO stack_labels (stack_id, label) VALUES ($1, $2) RETURNING id, stack_id, label',
    [stackId, label],
  );
  return rows[0]!;
}

export async function deleteStackLabel(db: Queryable, stackId: string, label: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM stack_labels WHERE stack_id = $1 AND label = $2', [stackId, label]);
  return (rowCount ?? 0) > 0;
}

export async function listStackAnnotations(db: Queryable, stackId: string): Promise<StackAnnotationRow[]> {
  const { rows } = await db.query<StackAnnotationRow>(
    'SELECT id, stack_id, key, value FROM stack_annotations WHERE stack_id = $1 ORDER BY key',
    [stackId],
  );
  return rows;
}

export async function insertStackAnnotation(db: Queryable, stackId: string, key: string, value: string): Promise<StackAnnotationRow> {
  const { rows } = await db.query<StackAnnotationRow>(
    'INSERT INTO stack_annotations (stack_id, key, value) VALUES ($1, $2, $3) RETURNING id, stack_id, key, value',
    [stackId, key, value],
  );
  return rows[0]!;
}

/** Returns the removed annotation's value (needed to find the agents that matched on it). */
export async function deleteStackAnnotation(db: Queryable, stackId: string, key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ value: string }>(
    'DELETE FROM stack_annotations WHERE stack_id = $1 AND key = $2 RETURNING value',
    [stackId, key],
  );
  return rows[0]?.value;
}
