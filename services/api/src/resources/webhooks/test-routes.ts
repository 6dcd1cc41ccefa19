import { randomUUID } from 'node:crypto';
import { decryptString, headerValueProblem, signatureHeaders } from '@brokkr/crypto';
import type { ApiContext } from '../../context.ts';
import { ApiError, errorKind } from '../../errors/api-error.ts';
import { webhookNotFound } from '../../errors/catalogue.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { testResultSchema } from './schemas.ts';
import { findSubscriptionSecrets, type SubscriptionSecrets } from '../../domain/webhook-subscriptions.ts';
import { sendTestWebhook } from './test-send.ts';

const tags = ['webhooks'];
/** Non-2xx (details.status_code, details.body), transport error, or an auth header that cannot be sent. */
const webhookTestFailed = errorKind(400, 'webhook_test_failed', 'The test delivery failed');

function open(ctx: ApiContext, field: string, data: Buffer | null): string | null {
  if (data === null) return null;
  try {
    return decryptString(ctx.webhookKey, data);
  } catch (err) {
    ctx.metrics.webhookDecryptFailures.inc({ field, path: 'test' });
    ctx.logger.error({ err, field }, 'webhook secret could not be decrypted');
    throw new ApiError(500, 'internal_error', `failed to decrypt webhook ${field.replace('_', ' ')}`);
  }
}

/** The test delivery: Brokkr's test payload with the headers a real delivery carries. */
function testRequest(ctx: ApiContext, sub: SubscriptionSecrets) {
  const url = open(ctx, 'url', sub.url_encrypted) ?? '';
  const auth = open(ctx, 'auth_header', sub.auth_header_encrypted);
  // Stored before create/update checked it: report it like any failed send, never a 500.
  const authProblem = auth === null ? undefined : headerValueProblem(auth);
  if (authProblem)
    throw webhookTestFailed.with(`the stored auth_header cannot be sent (it ${authProblem}): set a new one with PUT /webhooks/{id}`);
  const secrets = [
    open(ctx, 'signing_secret', sub.signing_secret_encrypted),
    open(ctx, 'previous_signing_secret', sub.previous_signing_secret_encrypted),
  ].filter((s): s is string => s !== null);
  const event = {
    id: randomUUID(),
    event_type: 'webhook.test',
    timestamp: new Date().toISOString(),
    data: { message: 'This is a test webhook delivery from Brokkr', subscription_id: sub.id },
  };
  const body = JSON.stringify(event);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'brokkr-api',
    ...(auth !== null ? { authorization: auth } : {}),
    ...signatureHeaders(secrets, { id: event.id, body }),
  };
  return { url, headers, body };
}

/** POST /webhooks/{id}/test: one signed test delivery, sent now through the SSRF guard. */
export const webhookTestRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/webhooks/:id/test',
    summary: 'Send a test delivery now (no delivery row is created)',
    tags,
    access: 'admin',
    params: idParams,
    responses: { 200: { description: 'The endpoint answered 2xx', schema: testResultSchema } },
    errors: [webhookNotFound, webhookTestFailed],
    async handler({ params, ctx }) {
      const sub = await findSubscriptionSecrets(ctx.db.pool, params.id);
      if (!sub) throw webhookNotFound();
      const request = testRequest(ctx, sub);
      const result = await sendTestWebhook({
        ...request,
        timeoutMs: Math.max(1, sub.timeout_seconds) * 1000,
        allowPrivateNetworks: ctx.settings.webhooks.allowPrivateNetworks,
      });
      if (result.kind === 'error') throw webhookTestFailed.with(`request failed: ${result.message}`);
      if (result.status < 200 || result.status >= 300) {
        throw webhookTestFailed.with(`endpoint returned HTTP ${result.status}`, { status_code: result.status, body: result.body });
      }
      return json(200, { success: true, status_code: result.status, message: 'Test delivery successful' });
    },
  }),
];
