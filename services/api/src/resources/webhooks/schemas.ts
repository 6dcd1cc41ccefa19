import { z } from 'zod';
import { timestamp, uuid } from '../../http/schemas.ts';

/** Filters a subscription may set; every set field must equal the event's `data.<field>`. */
export const webhookFiltersSchema = z.object({ agent_id: uuid().nullish(), stack_id: uuid().nullish() }).meta({ id: 'WebhookFilters' });

// Shapes only: ranges and semantic checks come later, in Brokkr's order (validation.ts).
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

export const testResultSchema = z
  .object({ success: z.literal(true), status_code: z.number().int(), message: z.string() })
  .meta({ id: 'WebhookTestResult' });
