import { errorKind, raising } from '../../errors/api-error.ts';
import type { Identity } from '../../auth/identity.ts';
import type { WorkOrderRow } from '../../domain/work-order-row.ts';

export const workOrderNotFound = errorKind(404, 'work_order_not_found', 'Work order not found');
export const workOrderNotClaimable = errorKind(
  404,
  'work_order_not_claimable',
  'Work order not found, not targeted at this agent, or not pending',
);
export const notClaimedByAgent = errorKind(403, 'work_order_not_claimed_by_agent', 'Work order is not claimed by this agent');
export const logEntryNotFound = errorKind(404, 'work_order_log_entry_not_found', 'Work order log entry not found');

/** Complete: an admin, or the agent in claimed_by (anyone else, generators included, gets 403). */
export const requireAdminOrClaimer = raising((identity: Identity, order: WorkOrderRow): void => {
  if (identity.admin) return;
  if (identity.agent === null || identity.agent !== order.claimed_by) throw notClaimedByAgent();
}, notClaimedByAgent);
