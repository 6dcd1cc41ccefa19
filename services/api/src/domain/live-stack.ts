import { prepared, type Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackRow } from './stack-row.ts';

/** Reads of a live stack that every resource touching stacks shares (access rules, cluster events, the fleet view). */

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

/** An explicit agent_targets row: the only way an agent may read a stack's metadata and objects. */
export async function agentHasHardTarget(db: Queryable, agentId: string, stackId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM agent_targets WHERE agent_id = $1 AND stack_id = $2', [agentId, stackId]);
  return rows.length > 0;
}

/** The owning generator of each of `stackIds` that is still live; deleted or unknown stacks are absent. */
export async function liveStackOwners(db: Queryable, stackIds: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; generator_id: string }>(
    'SELECT id, generator_id FROM stacks WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL',
    [stackIds],
  );
  return new Map(rows.map((r) => [r.id, r.generator_id]));
}
