import { z } from 'zod';
import { deliveryResultBodySchema, pendingDeliverySchema } from '@brokkr/contracts';
import { decryptString } from '@brokkr/crypto';
import {
  afterFailure,
  claimForAgent,
  isRetryableReport,
  recordAgentFailure,
  recordAgentSuccess,
  type RecordedResult,
} from '@brokkr/webhook-deliveries';
import type { ApiContext } from '../../context.ts';
import { errorKind } from '../../errors/api-error.ts';
import { agentNotFound, agentPakMismatch } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams, uuid } from '../../http/schemas.ts';
import { findSubscriptionSecrets } from '../../domain/webhook-subscriptions.ts';
import { handOut } from './hand-out.ts';
import { storedAgentError, usableStatusCode } from './report.ts';
import { deliveryNotFound } from './routes.ts';
import { deliveryResultSchema } from './schemas.ts';
import { agentStatus, findDelivery } from './sql/queries.ts';

const tags = ['webhooks'];
const CLAIM_LIMIT = 10;
const agentPakRequired = errorKind(403, 'agent_pak_required', 'Agent authentication required');
const notAcquiredByAgent = errorKind(403, 'delivery_not_acquired_by_agent', 'Delivery not acquired by this agent');

/** The subscription's URL, to remove it from an agent's error text; undefined when it cannot be read. */
async function targetUrl(ctx: ApiContext, subscriptionId: string): Promise<string | undefined> {
  const sub = await findSubscriptionSecrets(ctx.db.pool, subscriptionId);
  if (!sub) return undefined;
  try {
    return decryptString(ctx.webhookKey, sub.url_encrypted);
  } catch {
    // The generic patterns (URLs, addresses, host:port) still apply.
    return undefined;
  }
}

async function auditDead(
  ctx: ApiContext,
  r: RecordedResult & { deliveryId: string; agentId: string; error: string; statusCode?: number | undefined; retryable: boolean },
) {
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

/**
 * Agent-delivered webhooks: deliveries with `target_labels` are claimed by an agent
 * carrying all of them, sent from inside its cluster, and reported back.
 */
export const webhookAgentRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/agents/:agent_id/webhooks/pending',
    summary: 'Claim up to 10 webhook deliveries this agent must send (target_labels all on the agent)',
    description:
      'Each returned delivery is leased to the agent for 90 s plus its timeout_seconds (start its POST within 60 s of the claim); ' +
      'report it with POST /webhook-deliveries/{id}/result. ' +
      '`webhook_headers` (our extension) carries the Standard Webhooks signature, so agents never hold the signing secret.',
    tags,
    access: 'any',
    params: z.object({ agent_id: uuid() }),
    responses: {
      200: { description: 'Claimed deliveries, with the decrypted URL and auth header', schema: pendingDeliverySchema.array() },
    },
    errors: [agentPakMismatch, agentNotFound],
    async handler({ params, identity, ctx }) {
      const agentId = params.agent_id;
      if (!identity.admin && identity.agent !== agentId) throw agentPakMismatch();
      const status = await agentStatus(ctx.db.pool, agentId);
      if (status === undefined) throw agentNotFound();
      // Inactive agents get no work; their deliveries wait for an active agent.
      if (status !== 'ACTIVE') return json(200, []);
      const claimed = await claimForAgent(ctx.db.pool, agentId, CLAIM_LIMIT);
      return json(200, await handOut(ctx, agentId, claimed));
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
        return json(200, {
          status: delivery.status,
          delivery_id: delivery.id,
          attempts: delivery.attempts,
          next_retry_at: delivery.next_retry_at,
        });
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
        { maxBackoffSeconds: ctx.settings.webhooks.maxBackoffSeconds },
      );
      const recorded = await recordAgentFailure(ctx.db.pool, claim, { ...next, error });
      if (!recorded) throw notAcquiredByAgent();
      if (recorded.status === 'dead') await auditDead(ctx, { ...recorded, deliveryId: delivery.id, agentId, error, statusCode, retryable });
      return json(200, {
        status: recorded.status,
        delivery_id: delivery.id,
        attempts: recorded.attempts,
        next_retry_at: recorded.next_retry_at,
      });
    },
  }),
];
