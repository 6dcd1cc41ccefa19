import { z } from 'zod';
import { timestamp, uuid } from '../http/schemas.ts';

/** Filters a subscription may set; every set field must equal the event's `data.<field>`. */
export const webhookFiltersSchema = z
  .object({ agent_id: uuid().nullish(), stack_id: uuid().nullish() })
  .meta({ id: 'WebhookFilters' });

// Shapes only: ranges and semantic checks come later, in Brokkr's order (webhooks-input.ts).
const int = () => z.number().int();

export const createWebhookBodySchema = z
  .object({
    name: z.string(),
    url: z.string(),
    auth_header: z.string().nullish(),
    event_types: z.array(z.string()),
    filters: webhookFiltersSchema.nullish(),
    max_retries: int().nullish().meta({ description: '0..10, default 5: the total number of attempts' }),
    timeout_seconds: int().nullish().meta({ description: '1..300, default 30' }),
    target_labels: z.array(z.string()).nullish().meta({ description: 'Set: delivered by agents carrying all of these labels' }),
  })
  .meta({ id: 'CreateWebhookRequest' });

export const updateWebhookBodySchema = z
  .object({
    name: z.string().nullish(),
    url: z.string().nullish(),
    auth_header: z.string().nullish().meta({ description: 'null clears it' }),
    event_types: z.array(z.string()).nullish(),
    filters: webhookFiltersSchema.nullish().meta({ description: 'null clears them' }),
    enabled: z.boolean().nullish(),
    max_retries: int().nullish(),
    timeout_seconds: int().nullish(),
    target_labels: z.array(z.string()).nullish().meta({ description: 'null clears them' }),
  })
  .meta({ id: 'UpdateWebhookRequest' });

export type CreateWebhookBody = z.output<typeof createWebhookBodySchema>;
export type UpdateWebhookBody = z.output<typeof updateWebhookBodySchema>;

export const webhookSchema = z
  .object({
    id: uuid(),
    name: z.string(),
    has_url: z.boolean(),
    has_auth_header: z.boolean(),
    event_types: z.array(z.string()),
    filters: webhookFiltersSchema.nullable(),
    target_labels: z.array(z.string()).nullable(),
    enabled: z.boolean(),
    max_retries: z.number().int(),
    timeout_seconds: z.number().int(),
    created_at: timestamp(),
    updated_at: timestamp(),
    created_by: z.string().nullable(),
  })
  .meta({ id: 'WebhookResponse' });

export const createdWebhookSchema = webhookSchema
  .extend({ signing_secret: z.string().meta({ description: 'Standard Webhooks secret (whsec_…), shown only here' }) })
  .meta({ id: 'CreatedWebhookResponse' });

export const rotatedSecretSchema = z
  .object({
    id: uuid(),
    signing_secret: z.string(),
    previous_signing_secret_expires_at: timestamp().nullable().meta({ description: 'Until then both secrets sign' }),
  })
  .meta({ id: 'RotatedWebhookSecret' });

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

export const testResultSchema = z
  .object({ success: z.literal(true), status_code: z.number().int(), message: z.string() })
  .meta({ id: 'WebhookTestResult' });

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
