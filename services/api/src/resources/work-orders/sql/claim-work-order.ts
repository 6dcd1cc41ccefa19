import { prepared, type Queryable } from '@brokkr/db';
import { targetsAgent, workOrderColumns, type WorkOrderRow } from './work-order-row.ts';

// Prepared: with the create and the completion, the statements every work order runs.
const claimStatement = prepared(
  'brokkr_work_order_claim',
  `UPDATE work_orders w
      SET status = 'CLAIMED', claimed_by = $2, claimed_at = now()
    WHERE w.id = $1 AND w.status = 'PENDING' AND ${targetsAgent('$2')}
    RETURNING ${workOrderColumns('w')}`,
);

/**
 * The claim (DESIGN §3, contract §6): one compare-and-set on a PENDING order that targets the
 * agent. Of concurrent claimers exactly one gets the row; undefined for everyone else (missing,
 * not targeted at the agent, or no longer PENDING).
 */
export async function claimWorkOrder(db: Queryable, id: string, agentId: string): Promise<WorkOrderRow | undefined> {
  const { rows } = await db.query<WorkOrderRow>(claimStatement([id, agentId]));
  return rows[0];
}
