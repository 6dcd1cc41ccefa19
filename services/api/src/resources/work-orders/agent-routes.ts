import { statementEvent, statementOutboxRow } from '@brokkr/outbox';
import type { ApiContext } from '../../context.ts';
import { writeOnce } from '../../events/write-once.ts';
import type { Identity } from '../../auth/identity.ts';
import { defineRoute, json, type AnyRoute, type Reply } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { requireAdminOrClaimer, workOrderNotClaimable, workOrderNotFound } from './access.ts';
import { completeOwnClaim, completeWorkOrder, type Completion } from './complete.ts';
import { tooManyStreams } from '../../limits/stream-quota.ts';
import { replyPendingList } from '../../http/pending-list.ts';
import {
  claimWorkOrderSchema,
  completeWorkOrderSchema,
  pendingQuery,
  retryScheduledSchema,
  workOrderLogSchema,
  workOrderSchema,
} from './schemas.ts';
import { CLAIMED_DATA_KEYS, claimWorkOrder } from './sql/claim-work-order.ts';
import { findWorkOrder, listPendingForAgent } from './sql/queries.ts';

const tags = ['work-orders'];

interface RequestInfo {
  identity: Identity;
  clientIp: string | null;
  userAgent: string | null;
}

/** The audit entry of a completion: completed / failed {retryable} / retry, by the real caller. */
async function auditCompletion(ctx: ApiContext, who: RequestInfo, id: string, done: Completion): Promise<void> {
  const common = {
    actor: who.identity,
    resourceType: 'work_order' as const,
    resourceId: id,
    ipAddress: who.clientIp,
    userAgent: who.userAgent,
  };
  if (done.kind === 'retry') {
    const { retry_count, next_retry_after } = done.order;
    await ctx.audit({ ...common, action: 'workorder.retry', details: { retry_count, next_retry_after, error: done.error } });
  } else if (done.entry.success) {
    await ctx.audit({ ...common, action: 'workorder.completed', details: { work_type: done.entry.work_type } });
  } else {
    await ctx.audit({ ...common, action: 'workorder.failed', details: { retryable: done.retryable, work_type: done.entry.work_type } });
  }
}

function completionReply(done: Completion): Reply {
  return done.kind === 'retry' ? json(202, { status: 'retry_scheduled' }) : json(200, done.entry);
}

/** The agent side of work orders: the pending list (with a long-poll), claim and complete. */
export const workOrderAgentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:id/work-orders/pending',
    summary: 'PENDING work orders targeting the agent (by id, any label or any annotation), oldest first',
    description:
      'Long-poll extension: with `wait=<seconds>`, an empty answer is held until an order for the agent is created or ' +
      'becomes pending again (retry due, stale claim released), or the wait ends.',
    tags,
    access: 'any',
    params: idParams,
    query: pendingQuery,
    responses: { 200: { description: 'Work orders', schema: workOrderSchema.array() } },
    errors: [requireAdminOrSelf, tooManyStreams],
    async handler({ params, query, identity, ctx, res }) {
      requireAdminOrSelf(identity, params.id);
      const agentId = params.id.toLowerCase();
      return replyPendingList(ctx, res, { agentId, wait: query.wait, identity }, () =>
        listPendingForAgent(ctx.db.pool, agentId, query.work_type),
      );
    },
  }),

  defineRoute({
    method: 'post',
    path: '/work-orders/:id/claim',
    summary: 'Claim a PENDING work order for an agent it targets (atomic: one claimer wins)',
    tags,
    access: 'any',
    params: idParams,
    body: claimWorkOrderSchema,
    responses: { 200: { description: 'The claimed work order (CLAIMED)', schema: workOrderSchema } },
    errors: [requireAdminOrSelf, workOrderNotClaimable],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      requireAdminOrSelf(identity, body.agent_id);
      const agentId = body.agent_id.toLowerCase();
      const event = statementEvent('workorder.claimed');
      const order = await writeOnce(ctx, async (w) => {
        const claimed = await claimWorkOrder(w.db, params.id, agentId, event);
        if (!claimed) throw workOrderNotClaimable();
        w.inserted(statementOutboxRow(event, claimed.eventData, CLAIMED_DATA_KEYS));
        return claimed.row;
      });
      await ctx.audit({
        actor: identity,
        action: 'workorder.claimed',
        resourceType: 'work_order',
        resourceId: order.id,
        details: { agent_id: agentId, work_type: order.work_type },
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, order);
    },
  }),

  defineRoute({
    method: 'post',
    path: '/work-orders/:id/complete',
    summary: 'Report the outcome of a claimed work order',
    description:
      'Success, a non-retryable failure or a failure with no retry left: 200 with the log entry (the order leaves the queue). ' +
      'A retryable failure with retries left: 202 `{"status":"retry_scheduled"}`, RETRY_PENDING for backoff_seconds × 2^n.',
    tags,
    access: 'any',
    params: idParams,
    body: completeWorkOrderSchema,
    responses: {
      200: { description: 'The log entry (terminal)', schema: workOrderLogSchema },
      202: { description: 'Retry scheduled', schema: retryScheduledSchema },
    },
    errors: [workOrderNotFound, requireAdminOrClaimer],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      // An agent reporting success on its own claim: one statement. Anything else, or a miss, the general path.
      const claimer = body.success && !identity.admin ? identity.agent : null;
      const fast = claimer ? await completeOwnClaim(ctx, params.id, claimer, body.message ?? null) : undefined;
      const done =
        fast ??
        (await ctx.transact(async (tx) => {
          // Locked: a concurrent completion or stale-claim release waits, then sees the outcome.
          const order = await findWorkOrder(tx.client, params.id, 'update');
          if (!order) throw workOrderNotFound();
          requireAdminOrClaimer(identity, order);
          return completeWorkOrder(tx, order, body);
        }));
      await auditCompletion(ctx, { identity, clientIp, userAgent }, params.id, done);
      return completionReply(done);
    },
  }),
];
