import { prepared, type Queryable } from '@brokkr/db';
import { isoTimestampSql, outboxInsertSql, type StatementEvent } from '@brokkr/outbox';
import type { WorkOrderLogRow } from '../../../domain/work-order-row.ts';
import { moveToLogSql } from './move-to-log.ts';

/** The `workorder.completed` / `workorder.failed` payload's data, in Brokkr's key order. */
export const FINISHED_DATA_KEYS = ['work_order_log_id', 'work_type', 'success', 'result_message', 'agent_id', 'completed_at'] as const;

// ONE statement (its own transaction: no BEGIN/COMMIT, no SELECT … FOR UPDATE first), prepared:
// the order leaves the queue for the log only if the agent holds its claim (claimed_by is set
// only while CLAIMED), with its outbox row. The DELETE locks the row and re-checks claimed_by, so a
// stale-claim release that commits first leaves nothing to delete.
const finishOwnClaimStatement = prepared(
  'brokkr_work_order_finish_own_claim',
  `WITH ${moveToLogSql({ where: 'id = $1 AND claimed_by = $2', success: 'true', message: '$3' })},
   event AS (
     ${outboxInsertSql({
       event: '$4::jsonb',
       from: 'logged',
       data: `jsonb_build_object('work_order_log_id', logged.id, 'work_type', logged.work_type, 'success', logged.success,
                                 'result_message', logged.result_message, 'agent_id', logged.claimed_by,
                                 'completed_at', ${isoTimestampSql('logged.completed_at')})`,
     })}
   )
   SELECT logged.*, event.event_data FROM logged, event`,
);

/**
 * A successful completion reported by the agent holding the claim: the log row, the delete and
 * the `workorder.completed` outbox row (`event`). Undefined when the order is gone or the agent
 * does not hold its claim (the caller then takes the general path, which says which).
 */
export async function finishOwnClaim(
  db: Queryable,
  claim: { id: string; agentId: string; message: string | null },
  event: StatementEvent,
): Promise<{ entry: WorkOrderLogRow; eventData: Record<string, unknown> } | undefined> {
  const { rows } = await db.query<WorkOrderLogRow & { event_data: Record<string, unknown> }>(
    finishOwnClaimStatement([claim.id, claim.agentId, claim.message, JSON.stringify(event)]),
  );
  if (!rows[0]) return undefined;
  const { event_data: eventData, ...entry } = rows[0];
  return { entry, eventData };
}
