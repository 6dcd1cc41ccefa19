import { prepared, type Queryable } from '@brokkr/db';
import { isoTimestampSql, outboxInsertSql, type StatementEvent } from '@brokkr/outbox';
import { agentIsActive } from '../../../domain/active-agent.ts';
import { targetsAgent } from '../../../domain/association.ts';
import { workOrderColumns, type WorkOrderRow } from '../../../domain/work-order-row.ts';

/** The `workorder.claimed` payload's data, in Brokkr's key order. */
export const CLAIMED_DATA_KEYS = ['work_order_id', 'work_type', 'agent_id', 'claimed_at'] as const;

// ONE statement (its own transaction: no BEGIN/COMMIT round trips), prepared: the claim and its
// outbox row. A lost race updates no row, so the outbox CTE, reading the claimed rows, inserts none.
const claimStatement = prepared(
  'brokkr_work_order_claim',
  `WITH claimed AS (
     UPDATE work_orders w
        SET status = 'CLAIMED', claimed_by = $2, claimed_at = now()
      WHERE w.id = $1 AND w.status = 'PENDING' AND ${targetsAgent('$2')} AND ${agentIsActive('$2::uuid')}
      RETURNING ${workOrderColumns('w')}
   ), event AS (
     ${outboxInsertSql({
       event: '$3::jsonb',
       from: 'claimed',
       data: `jsonb_build_object('work_order_id', claimed.id, 'work_type', claimed.work_type, 'agent_id', claimed.claimed_by,
                                 'claimed_at', ${isoTimestampSql('claimed.claimed_at')})`,
     })}
   )
   SELECT claimed.*, event.event_data FROM claimed, event`,
);

/**
 * The claim (docs/adr/0004): one compare-and-set on a PENDING order that targets the
 * agent, with its `workorder.claimed` outbox row (`event`). Of concurrent claimers exactly one
 * gets the row; undefined for everyone else (missing, not targeted at the agent, no longer
 * PENDING, or the agent is not ACTIVE: inactive agents get no work).
 */
export async function claimWorkOrder(
  db: Queryable,
  id: string,
  agentId: string,
  event: StatementEvent,
): Promise<{ row: WorkOrderRow; eventData: Record<string, unknown> } | undefined> {
  const { rows } = await db.query<WorkOrderRow & { event_data: Record<string, unknown> }>(
    claimStatement([id, agentId, JSON.stringify(event)]),
  );
  if (!rows[0]) return undefined;
  const { event_data: eventData, ...row } = rows[0];
  return { row, eventData };
}
