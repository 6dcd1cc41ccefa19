import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

/**
 * Work orders: one-off jobs an agent claims, runs and completes. The hub
 * serves these shapes and the agent reads and writes them; both import them from here.
 */

/** Statuses of an active order; terminal orders leave for `work_order_log` (COMPLETED/FAILED appear only in the GET fallback). */
export const WORK_ORDER_STATUSES = ['PENDING', 'CLAIMED', 'RETRY_PENDING'] as const;
export type WorkOrderStatus = (typeof WORK_ORDER_STATUSES)[number] | 'COMPLETED' | 'FAILED';

/** The types Brokkr's agent runs (`custom`: apply YAML, wait for Jobs; `build`: Shipwright). Other strings are accepted and stored. */
export const KNOWN_WORK_TYPES = ['custom', 'build'] as const;

export const workOrderSchema = z
  .object({
    id: uuid(),
    created_at: timestamp(),
    updated_at: timestamp(),
    work_type: z.string(),
    yaml_content: z.string(),
    status: z.string().meta({ description: '`PENDING`, `CLAIMED`, `RETRY_PENDING`; `COMPLETED`/`FAILED` when read back from the log' }),
    claimed_by: uuid().nullable(),
    claimed_at: timestamp().nullable(),
    claim_timeout_seconds: z.number().int(),
    max_retries: z.number().int(),
    retry_count: z.number().int(),
    backoff_seconds: z.number().int(),
    next_retry_after: timestamp().nullable(),
    last_error: z.string().nullable(),
    last_error_at: timestamp().nullable(),
  })
  .meta({ id: 'WorkOrder' });
export type WorkOrder = z.output<typeof workOrderSchema>;

export const workOrderLogSchema = z
  .object({
    id: uuid(),
    work_type: z.string(),
    created_at: timestamp(),
    claimed_at: timestamp().nullable(),
    completed_at: timestamp(),
    claimed_by: uuid().nullable(),
    success: z.boolean(),
    retries_attempted: z.number().int(),
    result_message: z.string().nullable(),
    yaml_content: z.string(),
  })
  .meta({ id: 'WorkOrderLog' });
export type WorkOrderLog = z.output<typeof workOrderLogSchema>;

export const workOrderTargetingSchema = z
  .object({
    agent_ids: z.array(uuid()).nullish(),
    labels: z.array(z.string()).nullish(),
    annotations: z.record(z.string(), z.string()).nullish(),
  })
  .meta({ id: 'WorkOrderTargeting', description: 'OR-combined: an agent matches by id, by any label, or by any (key, value) annotation' });

export const newWorkOrderSchema = z
  .object({
    work_type: z.string(),
    yaml_content: z.string(),
    max_retries: z.number().int().nullish(),
    backoff_seconds: z.number().int().nullish(),
    claim_timeout_seconds: z.number().int().nullish(),
    targeting: workOrderTargetingSchema.nullish(),
    target_agent_ids: z.array(uuid()).nullish().meta({ description: 'Legacy; merged into targeting.agent_ids' }),
  })
  .meta({ id: 'NewWorkOrder' });
export type NewWorkOrder = z.input<typeof newWorkOrderSchema>;

export const claimWorkOrderSchema = z.object({ agent_id: uuid() }).meta({ id: 'ClaimWorkOrder' });
export type ClaimWorkOrder = z.input<typeof claimWorkOrderSchema>;

/** `retryable` defaults to true (Brokkr); the agent sets it honestly (transient failures only). */
export const completeWorkOrderSchema = z
  .object({ success: z.boolean(), message: z.string().nullish(), retryable: z.boolean().nullish() })
  .meta({ id: 'CompleteWorkOrder' });
export type CompleteWorkOrder = z.input<typeof completeWorkOrderSchema>;

/** 202 answer of a failed completion that scheduled a retry. */
export const retryScheduledSchema = z.object({ status: z.literal('retry_scheduled') }).meta({ id: 'WorkOrderRetryScheduled' });
