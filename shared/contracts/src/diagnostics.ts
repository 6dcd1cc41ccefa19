import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

/**
 * On-demand diagnostics: an admin asks one agent
 * to collect pod statuses, Kubernetes events and log tails for a deployment object; the agent
 * claims the request, collects and posts a result. The hub serves these shapes, the agent reads
 * and writes them; both import them from here.
 */

/** `pending` → `claimed` → `completed`; maintenance sets `expired` (never claimed) and `failed` (claimed, no result in time). */
export const DIAGNOSTIC_STATUSES = ['pending', 'claimed', 'completed', 'failed', 'expired'] as const;
export type DiagnosticStatus = (typeof DIAGNOSTIC_STATUSES)[number];

/** Brokkr's bounds for `retention_minutes` (expires_at = created_at + retention). */
export const DIAGNOSTIC_RETENTION_MINUTES = { min: 1, max: 1440, default: 60 } as const;

export const diagnosticRequestSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    deployment_object_id: uuid(),
    status: z.string().meta({ description: '`pending`, `claimed`, `completed`, `failed` or `expired`' }),
    requested_by: z.string().nullable(),
    created_at: timestamp(),
    claimed_at: timestamp().nullable(),
    completed_at: timestamp().nullable(),
    expires_at: timestamp(),
  })
  .meta({ id: 'DiagnosticRequest' });
export type DiagnosticRequest = z.output<typeof diagnosticRequestSchema>;

export const diagnosticResultSchema = z
  .object({
    id: uuid(),
    request_id: uuid(),
    pod_statuses: z.string().meta({ description: 'JSON-encoded PodStatus[]' }),
    events: z.string().meta({ description: 'JSON-encoded EventInfo[]; `[{"error": "..."}]` when collection failed' }),
    log_tails: z.string().nullable().meta({ description: 'JSON-encoded map "<pod>/<container>" → log text or "Error: ..."' }),
    collected_at: timestamp(),
    created_at: timestamp(),
  })
  .meta({ id: 'DiagnosticResult' });
export type DiagnosticResult = z.output<typeof diagnosticResultSchema>;

/** GET /diagnostics/{id}. */
export const diagnosticWithResultSchema = z
  .object({ request: diagnosticRequestSchema, result: diagnosticResultSchema.nullable() })
  .meta({ id: 'DiagnosticRequestWithResult' });
export type DiagnosticWithResult = z.output<typeof diagnosticWithResultSchema>;

/** POST /deployment-objects/{id}/diagnostics (range checks are the handler's: 400 `invalid_diagnostic_request`). */
export const newDiagnosticRequestSchema = z
  .object({
    agent_id: uuid(),
    requested_by: z.string().nullish(),
    retention_minutes: z.number().int().nullish().meta({ description: '1 … 1440, default 60' }),
  })
  .meta({ id: 'CreateDiagnosticRequest' });
export type NewDiagnosticRequest = z.input<typeof newDiagnosticRequestSchema>;

/** POST /diagnostics/{id}/result (empty pod_statuses or events: 400 `invalid_diagnostic_result`). */
export const submitDiagnosticResultSchema = z
  .object({
    pod_statuses: z.string(),
    events: z.string(),
    log_tails: z.string().nullish(),
    collected_at: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'SubmitDiagnosticResult' });
export type SubmitDiagnosticResult = z.input<typeof submitDiagnosticResultSchema>;

/** The JSON inside `pod_statuses` (Brokkr's PodStatus). */
export interface DiagnosticPodStatus {
  name: string;
  namespace: string;
  phase: string;
  conditions: { condition_type: string; status: string; reason: string | null; message: string | null }[];
  containers: {
    name: string;
    ready: boolean;
    restart_count: number;
    state: 'Running' | 'Waiting' | 'Terminated' | 'Unknown';
    state_reason: string | null;
    state_message: string | null;
  }[];
}

/** The JSON inside `events` (Brokkr's EventInfo). */
export interface DiagnosticEventInfo {
  event_type: string | null;
  reason: string | null;
  message: string | null;
  involved_object: string;
  involved_object_kind: string | null;
  first_timestamp: string | null;
  last_timestamp: string | null;
  count: number | null;
}
