import type { Queryable } from '@brokkr/db';
import type { StackRow } from '../../../domain/stack-row.ts';
import { WORK_ORDER_COLUMNS, type WorkOrderRow } from '../../../domain/work-order-row.ts';

/** Brokkr's Stack as the `stack_changed` frame carries it (the row, without our extensions). */
export type StackFrameBody = Omit<StackRow, 'expires_at'>;

export async function findStackForFrame(db: Queryable, id: string): Promise<StackFrameBody | undefined> {
  const { rows } = await db.query<StackFrameBody>(
    'SELECT id, created_at, updated_at, deleted_at, name, description, generator_id FROM stacks WHERE id = $1',
    [id],
  );
  return rows[0];
}

/** Brokkr's WorkOrder as the `work_order` frame carries it. */
export async function findWorkOrderForFrame(db: Queryable, id: string): Promise<WorkOrderRow | undefined> {
  const { rows } = await db.query<WorkOrderRow>(`SELECT ${WORK_ORDER_COLUMNS} FROM work_orders WHERE id = $1`, [id]);
  return rows[0];
}
