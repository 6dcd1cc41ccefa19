import { z } from 'zod';
import { redeliver } from '@brokkr/webhook-deliveries';
import { errorKind } from '../../errors/api-error.ts';
import { webhookNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { findSubscription } from '../../domain/webhook-subscriptions.ts';
import { webhookDeliverySchema } from './schemas.ts';
import { findDelivery, listDeliveries, listDeliveriesForSubscription } from './sql/queries.ts';
import { wakeDispatchers } from './wake-dispatchers.ts';

const tags = ['webhooks'];
export const deliveryNotFound = errorKind(404, 'delivery_not_found', 'Delivery not found');
const deliveryNotFinished = errorKind(409, 'delivery_not_finished', 'Only dead or successful deliveries can be redelivered');
const nonNegative = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const STATUSES = ['pending', 'acquired', 'success', 'failed', 'dead'] as const;

/** What admins see and do with deliveries; the dispatcher (or an agent) sends them. */
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
        throw deliveryNotFinished.with(`Delivery is ${current.status}; only dead or successful deliveries can be redelivered`, {
          status: current.status,
        });
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
];
