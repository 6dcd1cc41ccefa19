import { z } from 'zod';
import { decryptString } from '@brokkr/crypto';
import { errorKind } from '../http/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../http/route.ts';
import { idParams } from '../http/schemas.ts';
import type { ApiContext } from '../context.ts';
import { afterFailure, isRetryableReport, recordAgentFailure, recordAgentSuccess, redeliver, type RecordedResult } from '@brokkr/webhook-deliveries';
import { storedAgentError, usableStatusCode } from './webhook-deliveries-result.ts';
import { findDelivery, listDeliveries, listDeliveriesForSubscription } from './webhook-deliveries-sql.ts';
import { webhookNotFound } from './webhooks-crud.ts';
import { wakeDispatchers, webhookKey } from './webhooks-key.ts';
import { deliveryResultBodySchema, deliveryResultSchema, webhookDeliverySchema } from './webhooks-schemas.ts';
import { findSubscription, findSubscriptionSecrets } from './webhooks-sql.ts';

const tags = ['webhooks'];
const deliveryNotFound = errorKind(404, 'delivery_not_found', 'Delivery not found');
const deliveryNotFinished = errorKind(409, 'delivery_not_finished', 'Only dead or successful deliveries can be redelivered');
const agentPakRequired = errorKind(403, 'agent_pak_required', 'Agent authentication required');
const notAcquiredByAgent = errorKind(403, 'delivery_not_acquired_by_agent', 'Delivery not acquired by this agent');
const nonNegative = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const STATUSES = ['pending', 'acquired', 'success', 'failed', 'dead'] as const;

/** The subscription's URL, to remove it from an agent's error text; undefined when it cannot be read. */
async function targetUrl(ctx: ApiContext, subscriptionId: string): Promise<string | undefined> {
  const sub = await findSubscriptionSecrets(ctx.db.pool, subscriptionId);
  if (!sub) return undefined;
  try {
    return decryptString(webhookKey(ctx), sub.url_encrypted);
  } catch {
    // The generic patterns (URLs, addresses, host:port) still apply.
    return undefined;
  }
}

async function auditDead(ctx: ApiContext, r: RecordedResult & { deliveryId: string; agentId: string; error: string; statusCode?: number | undefined; retryable: boolean }) {
  await ctx.audit({
    actor: 'system',
    action: 'webhook.delivery_failed',
    resourceType: 'webhook_subscription',
    resourceId: r.subscription_id,
    details: {
      delivery_id: r.deliveryId,
      attempts: r.attempts,
      error: r.error,
      status_code: r.statusCode ?? null,
      retryable: r.retryable,
      delivered_by_agent: r.agentId,
    },
  });
}

export const webhookDeliveryRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/webhooks/:id/deliveries',
    summary: "A subscription's deliveries, newest first",
    tags,
    access: 'admin',
    params: idParams,
    query: z.object({ status: z.string().optional(), limit: nonNegative(50), offset: nonNegative(0) }),
    responses: { 200: { description: 'Deliveries', schema: webhookDeliverySchema.array() } },
    errors: [webhookNotFound],
    async handler({ params, query, ctx }) {
      if (!(await findSubscription(ctx.db.pool, params.id))) throw webhookNotFound();
      return json(200, await listDeliveriesForSubscription(ctx.db.pool, params.id, query));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/webhook-deliveries',
    summary: 'Deliveries across subscriptions, newest first (e.g. every dead one)',
    tags,
    access: 'admin',
    query: z.object({
      status: z.enum(STATUSES).optional(),
      subscription_id: z.guid().optional(),
      limit: z.coerce.number().int().min(1).max(1000).default(50),
    }),
    responses: { 200: { description: 'Deliveries', schema: webhookDeliverySchema.array() } },
    handler: async ({ query, ctx }) =>
      json(200, await listDeliveries(ctx.db.pool, { status: query.status, subscriptionId: query.subscription_id, limit: query.limit })),
  }),

  defineRoute({
    method: 'post',
    path: '/webhook-deliveries/:id/redeliver',
    summary: 'Send a finished (dead or successful) delivery again, with a fresh attempt budget',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The delivery, pending again', schema: webhookDeliverySchema } },
    // 409: it is still pending, in flight or waiting for a retry.
    errors: [deliveryNotFound, deliveryNotFinished],
    async handler({ params, identity, ctx }) {
      const row = await redeliver(ctx.db.pool, params.id);
      if (!row) {
        const current = await findDelivery(ctx.db.pool, params.id);
        if (!current) throw deliveryNotFound();
        throw deliveryNotFinished.with(`Delivery is ${current.status}; only dead or successful deliveries can be redelivered`, { status: current.status });
      }
      wakeDispatchers(ctx);
      await ctx.audit({
        actor: identity,
        action: 'webhook.redelivered',
        resourceType: 'webhook_subscription',
        resourceId: row.subscription_id,
        details: { delivery_id: row.id, event_id: row.event_id, event_type: row.event_type },
      });
      return json(200, row);
    },
  }),

  defineRoute({
    method: 'post',
    path: '/webhook-deliveries/:id/result',
    summary: 'An agent reports the outcome of a delivery it claimed',
    tags,
    access: 'any',
    params: idParams,
    body: deliveryResultBodySchema,
    responses: { 200: { description: 'Recorded', schema: deliveryResultSchema } },
    errors: [agentPakRequired, deliveryNotFound, notAcquiredByAgent],
    async handler({ params, body, identity, ctx }) {
      const agentId = identity.agent;
      if (!agentId) throw agentPakRequired();
      const delivery = await findDelivery(ctx.db.pool, params.id);
      if (!delivery) throw deliveryNotFound();
      if (delivery.acquired_by !== agentId) throw notAcquiredByAgent();
      if (delivery.status === 'success' || delivery.status === 'dead') {
        // A repeated report (the first answer was lost): the outcome is already recorded.
        return json(200, { status: delivery.status, delivery_id: delivery.id, attempts: delivery.attempts, next_retry_at: delivery.next_retry_at });
      }
      // Fenced on the attempts read here too: what is written was decided from them.
      const claim = { id: delivery.id, agentId, attempts: delivery.attempts };
      if (body.success) {
        const done = await recordAgentSuccess(ctx.db.pool, claim);
        if (!done) throw notAcquiredByAgent();
        return json(200, { status: 'success', delivery_id: delivery.id });
      }
      const statusCode = usableStatusCode(body.status_code);
      const error = storedAgentError(body.error, statusCode, await targetUrl(ctx, delivery.subscription_id));
      const retryable = isRetryableReport(statusCode);
      // The dispatcher's retry policy; an agent's report carries no Retry-After.
      const next = afterFailure(
        { retryable, attemptsBefore: delivery.attempts, maxRetries: delivery.max_retries ?? 5 },
        { maxBackoffSeconds: ctx.config.BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS },
      );
      const recorded = await recordAgentFailure(ctx.db.pool, claim, { ...next, error });
      if (!recorded) throw notAcquiredByAgent();
      if (recorded.status === 'dead') await auditDead(ctx, { ...recorded, deliveryId: delivery.id, agentId, error, statusCode, retryable });
      return json(200, { status: recorded.status, delivery_id: delivery.id, attempts: recorded.attempts, next_retry_at: recorded.next_retry_at });
    },
  }),
];
