import type { Queryable } from '@brokkr/db';
import { findWorkOrder } from '../../../resources/work-orders/sql/queries.ts';
import type { StackRow } from '../../../domain/stack-row.ts';
import type { WorkOrderRow } from '../../../domain/work-order-row.ts';

/** Brokkr's Stack as the `stack_changed` frame carries it (the row, without our extensions). */
export type StackFrameBody = Omit<StackRow, 'expires_at'>;

export async function findStackForFrame(db: Queryable, id: string): Promise<StackFrameBody | undefined> {
  const { rows } = await db.query<StackFrameBody>(
    'SELECT id, created_at, updated_at, deleted_at, name, description, generator_id FROM stacks WHERE id = $1',
    [id],
  );
  return rows[0];
}

export async function findWorkOrderForFrame(db: Queryable, id: string): Promise<WorkOrderRow | undefined> {
  return findWorkOrder(db, id);
}
