import type { z } from 'zod';
import type { completeWorkOrderSchema } from '@brokkr/contracts';
import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import type { TxScope } from '../../events/transact.ts';
import { writeOnce, type WriteOnceDeps } from '../../events/write-once.ts';
import { finishOwnClaim, FINISHED_DATA_KEYS } from './sql/finish-own-claim.ts';
import { finishWorkOrder } from './sql/finish-work-order.ts';
import { scheduleRetry } from './sql/schedule-retry.ts';
import type { WorkOrderLogRow, WorkOrderRow } from '../../domain/work-order-row.ts';

export type Completion =
  { kind: 'logged'; entry: WorkOrderLogRow; retryable: boolean } | { kind: 'retry'; order: WorkOrderRow; error: string };

const UNKNOWN_ERROR = 'Unknown error';

/**
 * POST /work-orders/{id}/complete on an order locked FOR UPDATE by the caller's transaction
 *. Success, a non-retryable failure or a failure with no retry left: the log row
 * and the delete, with `workorder.completed` / `workorder.failed`. Otherwise RETRY_PENDING at
 * backoff × 2^n (no event: Brokkr has none for a retry; the audit entry records it).
 */
export async function completeWorkOrder(
  tx: TxScope,
  order: WorkOrderRow,
  body: z.output<typeof completeWorkOrderSchema>,
): Promise<Completion> {
  const retryable = body.retryable ?? true;
  const n = order.retry_count + 1;
  if (!body.success && retryable && n <= order.max_retries) {
    const error = body.message ?? UNKNOWN_ERROR;
    const updated = await scheduleRetry(tx.client, order.id, n, error);
    return { kind: 'retry', order: updated!, error };
  }
  const message = body.success ? (body.message ?? null) : (body.message ?? UNKNOWN_ERROR);
  const entry = (await finishWorkOrder(tx.client, order.id, { success: body.success, message }))!;
  tx.emit(entry.success ? 'workorder.completed' : 'workorder.failed', {
    work_order_log_id: entry.id,
    work_type: entry.work_type,
    success: entry.success,
    result_message: entry.result_message,
    agent_id: entry.claimed_by,
    completed_at: entry.completed_at.toISOString(),
  });
  return { kind: 'logged', entry, retryable };
}

/**
 * The common case in one statement (writeOnce): the agent holding the claim reports success.
 * Undefined when it does not apply (the order is gone, or not claimed by this agent): the caller
 * runs the general completion, which answers 404 or 403 as before.
 */
export async function completeOwnClaim(
  ctx: WriteOnceDeps,
  id: string,
  agentId: string,
  message: string | null,
): Promise<Completion | undefined> {
  const event = statementEvent('workorder.completed');
  return writeOnce(ctx, async (w) => {
    const done = await finishOwnClaim(w.db, { id, agentId, message }, event);
    if (!done) return undefined;
    w.inserted(statementOutboxRow(event, done.eventData, FINISHED_DATA_KEYS));
    return { kind: 'logged', entry: done.entry, retryable: true };
  });
}
