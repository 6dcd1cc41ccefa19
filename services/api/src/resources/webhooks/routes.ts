import { z } from 'zod';
import { EVENT_TYPES } from '@brokkr/contracts';
import { encrypt, generateSigningSecret } from '@brokkr/crypto';
import type { Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { webhookNotFound } from '../../errors/catalogue.ts';
import { jsonBody } from '../../http/body.ts';
import { defineRoute, json, noContent, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { invalidateSubscriptionCaches } from './cache-invalidation.ts';
import {
  createWebhookBodySchema,
  createdWebhookSchema,
  rotatedSecretSchema,
  updateWebhookBodySchema,
  webhookSchema,
  type UpdateWebhookBody,
} from './schemas.ts';
import { filtersForStorage, webhookResponse } from './serialize.ts';
import { insertSubscription } from './sql/create-subscription.ts';
import { deleteSubscription } from './sql/delete-subscription.ts';
import { findSubscription, listSubscriptions } from '../../domain/webhook-subscriptions.ts';
import { rotateSigningSecret } from './sql/rotate-signing-secret.ts';
import { updateSubscription, type SubscriptionChanges } from './sql/update-subscription.ts';
import { checkUpdateWebhook, parseCreateWebhook, parseUpdateWebhook } from './validation.ts';

const tags = ['webhooks'];
/** How long the replaced secret keeps signing after a rotation. */
const ROTATION_GRACE_SECONDS = 24 * 60 * 60;

function changesFrom(ctx: ApiContext, body: UpdateWebhookBody): SubscriptionChanges {
  const key = ctx.webhookKey;
  const keep = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);
  return {
    name: keep(body.name),
    url_encrypted: body.url === undefined || body.url === null ? undefined : encrypt(key, body.url),
    // For these three, null clears and absent keeps.
    auth_header_encrypted: body.auth_header === undefined ? undefined : body.auth_header === null ? null : encrypt(key, body.auth_header),
    filters: body.filters === undefined ? undefined : body.filters === null ? null : filtersForStorage(body.filters),
    target_labels: body.target_labels,
    event_types: keep(body.event_types),
    enabled: keep(body.enabled),
    max_retries: keep(body.max_retries),
    timeout_seconds: keep(body.timeout_seconds),
  };
}

/** After every committed change: dispatchers drop their cache, then the audit entry. */
async function changed(
  ctx: ApiContext,
  identity: Identity,
  action: string,
  change: { id: string; details?: Record<string, unknown> },
): Promise<void> {
  invalidateSubscriptionCaches(ctx, change.id);
  await ctx.audit({
    actor: identity,
    action,
    resourceType: 'webhook_subscription',
    resourceId: change.id,
    details: change.details ?? null,
  });
}

/**
 * Webhook subscriptions. `/webhooks/event-types` comes before `/webhooks/:id` so
 * express does not take it for an id.
 */
export const webhookRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/webhooks/event-types',
    summary: 'The event types a subscription can name (patterns `*` and `prefix.*` also work)',
    tags,
    access: 'admin',
    responses: { 200: { description: 'Event types', schema: z.array(z.string()) } },
    handler: () => json(200, [...EVENT_TYPES]),
  }),

  defineRoute({
    method: 'get',
    path: '/webhooks',
    summary: 'List webhook subscriptions (newest first, disabled ones included)',
    tags,
    access: 'admin',
    responses: { 200: { description: 'Subscriptions', schema: webhookSchema.array() } },
    handler: async ({ ctx }) => json(200, (await listSubscriptions(ctx.db.pool)).map(webhookResponse)),
  }),

  defineRoute({
    method: 'post',
    path: '/webhooks',
    summary: 'Create a webhook subscription',
    description: 'The response carries the Standard Webhooks signing secret; it is never shown again (rotate it to get a new one).',
    tags,
    access: 'admin',
    bodyMode: 'raw',
    requestContent: { 'application/json': createWebhookBodySchema },
    responses: { 201: { description: 'The subscription (enabled) and its signing secret', schema: createdWebhookSchema } },
    // The body is read raw and parsed here, in Brokkr's validation order (validation.ts).
    errors: [jsonBody, parseCreateWebhook],
    async handler({ req, identity, ctx }) {
      const body = parseCreateWebhook(jsonBody(req, 'json'));
      const key = ctx.webhookKey;
      const secret = generateSigningSecret();
      const row = await insertSubscription(ctx.db.pool, {
        name: body.name,
        urlEncrypted: encrypt(key, body.url),
        authHeaderEncrypted: body.auth_header === undefined || body.auth_header === null ? null : encrypt(key, body.auth_header),
        eventTypes: body.event_types,
        filters: body.filters ? filtersForStorage(body.filters) : null,
        targetLabels: body.target_labels ?? null,
        maxRetries: body.max_retries ?? 5,
        timeoutSeconds: body.timeout_seconds ?? 30,
        signingSecretEncrypted: encrypt(key, secret),
      });
      await changed(ctx, identity, 'webhook.created', { id: row.id, details: { name: row.name, event_types: row.event_types } });
      return json(201, { ...webhookResponse(row), signing_secret: secret });
    },
  }),

  defineRoute({
    method: 'get',
    path: '/webhooks/:id',
    summary: 'Get a webhook subscription',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The subscription', schema: webhookSchema } },
    errors: [webhookNotFound],
    async handler({ params, ctx }) {
      const row = await findSubscription(ctx.db.pool, params.id);
      if (!row) throw webhookNotFound();
      return json(200, webhookResponse(row));
    },
  }),

  defineRoute({
    method: 'put',
    path: '/webhooks/:id',
    summary: 'Update a webhook subscription (every field optional)',
    tags,
    access: 'admin',
    params: idParams,
    bodyMode: 'raw',
    requestContent: { 'application/json': updateWebhookBodySchema },
    responses: { 200: { description: 'The updated subscription', schema: webhookSchema } },
    errors: [jsonBody, parseUpdateWebhook, webhookNotFound, checkUpdateWebhook],
    async handler({ params, req, identity, ctx }) {
      const body = parseUpdateWebhook(jsonBody(req, 'json'));
      if (!(await findSubscription(ctx.db.pool, params.id))) throw webhookNotFound();
      checkUpdateWebhook(body);
      const row = await updateSubscription(ctx.db.pool, params.id, changesFrom(ctx, body));
      if (!row) throw webhookNotFound();
      await changed(ctx, identity, 'webhook.updated', { id: row.id, details: { name: row.name, enabled: row.enabled } });
      return json(200, webhookResponse(row));
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/webhooks/:id',
    summary: 'Delete a webhook subscription and its deliveries',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: [webhookNotFound],
    async handler({ params, identity, ctx }) {
      if (!(await deleteSubscription(ctx.db.pool, params.id))) throw webhookNotFound();
      await changed(ctx, identity, 'webhook.deleted', { id: params.id });
      return noContent();
    },
  }),

  defineRoute({
    method: 'post',
    path: '/webhooks/:id/rotate-secret',
    summary: 'Rotate the signing secret (the old one keeps signing alongside for 24 h)',
    description:
      'Returns the new Standard Webhooks secret once. Until `previous_signing_secret_expires_at`, deliveries carry two signatures.',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The new secret', schema: rotatedSecretSchema } },
    errors: [webhookNotFound],
    async handler({ params, identity, ctx }) {
      const secret = generateSigningSecret();
      const row = await rotateSigningSecret(ctx.db.pool, params.id, encrypt(ctx.webhookKey, secret), ROTATION_GRACE_SECONDS);
      if (!row) throw webhookNotFound();
      invalidateSubscriptionCaches(ctx, params.id);
      await ctx.audit({
        actor: identity,
        action: 'webhook.updated',
        resourceType: 'webhook_subscription',
        resourceId: params.id,
        details: { name: row.name, enabled: row.enabled, signing_secret_rotated: true },
      });
      return json(200, {
        id: params.id,
        signing_secret: secret,
        previous_signing_secret_expires_at: row.previous_signing_secret_expires_at,
      });
    },
  }),
];
