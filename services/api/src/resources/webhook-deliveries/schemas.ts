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

export const deliveryResultSchema = z
  .object({
    status: z.enum(['success', 'failed', 'dead']),
    delivery_id: uuid(),
    attempts: z.number().int().optional(),
    next_retry_at: timestamp().nullable().optional(),
  })
  .meta({ id: 'DeliveryResultResponse' });
