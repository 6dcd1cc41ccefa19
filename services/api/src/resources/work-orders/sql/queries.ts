import type { Queryable } from '@brokkr/db';
import { agentIsActive } from '../../../domain/active-agent.ts';
import { targetsAgent } from '../../../domain/association.ts';
import {
  WORK_ORDER_COLUMNS,
  WORK_ORDER_LOG_COLUMNS,
  workOrderColumns,
  type WorkOrderLogRow,
  type WorkOrderRow,
} from '../../../domain/work-order-row.ts';

/** The read-only statements of work orders and their log. */

export async function findWorkOrder(db: Queryable, id: string, lock?: 'update'): Promise<WorkOrderRow | undefined> {
  const { rows } = await db.query<WorkOrderRow>(
    `SELECT ${WORK_ORDER_COLUMNS} FROM work_orders WHERE id = $1${lock === 'update' ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0];
}

/** The active queue, newest first. */
export async function listWorkOrders(db: Queryable, filter: { status?: string; workType?: string }): Promise<WorkOrderRow[]> {
  const { rows } = await db.query<WorkOrderRow>(
    `SELECT ${WORK_ORDER_COLUMNS} FROM work_orders
      WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR work_type = $2)
      ORDER BY created_at DESC, id`,
    [filter.status ?? null, filter.workType ?? null],
  );
  return rows;
}

/** PENDING orders targeting the agent (explicit id OR any label OR any annotation), oldest first; none while it is not ACTIVE. */
export async function listPendingForAgent(db: Queryable, agentId: string, workType: string | undefined): Promise<WorkOrderRow[]> {
  const { rows } = await db.query<WorkOrderRow>(
    `SELECT ${workOrderColumns('w')} FROM work_orders w
      WHERE w.status = 'PENDING' AND ($2::text IS NULL OR w.work_type = $2) AND ${targetsAgent('$1')} AND ${agentIsActive('$1::uuid')}
      ORDER BY w.created_at ASC, w.id`,
    [agentId, workType ?? null],
  );
  return rows;
}

export async function findLogEntry(db: Queryable, id: string): Promise<WorkOrderLogRow | undefined> {
  const { rows } = await db.query<WorkOrderLogRow>(`SELECT ${WORK_ORDER_LOG_COLUMNS} FROM work_order_log WHERE id = $1`, [id]);
  return rows[0];
}

export interface LogFilter {
  workType?: string | undefined;
  success?: boolean | undefined;
  agentId?: string | undefined;
  limit?: number | undefined;
}

/** The log, newest completion first; `limit` unset = everything (Brokkr has no default). */
export async function listLogEntries(db: Queryable, filter: LogFilter): Promise<WorkOrderLogRow[]> {
  const { rows } = await db.query<WorkOrderLogRow>(
    `SELECT ${WORK_ORDER_LOG_COLUMNS} FROM work_order_log
      WHERE ($1::text IS NULL OR work_type = $1) AND ($2::boolean IS NULL OR success = $2) AND ($3::uuid IS NULL OR claimed_by = $3)
      ORDER BY completed_at DESC, id
      LIMIT $4`,
    [filter.workType ?? null, filter.success ?? null, filter.agentId ?? null, filter.limit ?? null],
  );
  return rows;
}
