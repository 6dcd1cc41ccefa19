import { z } from 'zod';
import { timestamp, uuid } from '../../http/schemas.ts';

export const webhookDeliverySchema = z
  .object({
    id: uuid(),
    subscription_id: uuid(),
    event_type: z.string(),
    event_id: uuid(),
    payload: z.string().meta({ description: 'The JSON body sent, as a string' }),
    target_labels: z.array(z.string()).nullable(),
    status: z.enum(['pending', 'acquired', 'success', 'failed', 'dead']),
    acquired_by: uuid().nullable(),
    acquired_until: timestamp().nullable(),
    attempts: z.number().int(),
    last_attempt_at: timestamp().nullable(),
    next_retry_at: timestamp().nullable(),
    last_error: z.string().nullable(),
    created_at: timestamp(),
    completed_at: timestamp().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

/**
 * Our extension of Brokkr's PendingWebhookDelivery (extra fields are wire-compatible: Brokkr's
 * agent ignores them). The api signs, so the signing secret never leaves the hub.
 */
const webhookHeadersSchema = z
  .object({
    'webhook-id': z.string().meta({ description: 'The event id, stable across retries' }),
    'webhook-timestamp': z.string().meta({ description: 'Seconds since the epoch, at claim time' }),
    'webhook-signature': z.string().optional().meta({ description: '`v1,<base64 HMAC-SHA256>` per active secret; absent when the subscription has none' }),
  })
  .meta({ description: 'Standard Webhooks headers computed by the broker at claim time; the agent sends them unchanged' });

export const pendingDeliverySchema = z
  .object({
    id: uuid(),
    subscription_id: uuid(),
    event_type: z.string(),
    payload: z.string(),
    url: z.string(),
    auth_header: z.string().nullable(),
    timeout_seconds: z.number().int(),
    max_retries: z.number().int(),
    attempts: z.number().int(),
    webhook_headers: webhookHeadersSchema,
  })
  .meta({ id: 'PendingWebhookDelivery' });

export const deliveryResultBodySchema = z
  .object({
    success: z.boolean(),
    status_code: z.number().int().nullish(),
    error: z.string().nullish(),
    duration_ms: z.number().int().nullish(),
  })
  .meta({ id: 'DeliveryResultRequest' });

export const deliveryResultSchema = z
  .object({
    status: z.enum(['success', 'failed', 'dead']),
    delivery_id: uuid(),
    attempts: z.number().int().optional(),
    next_retry_at: timestamp().nullable().optional(),
  })
  .meta({ id: 'DeliveryResultResponse' });
