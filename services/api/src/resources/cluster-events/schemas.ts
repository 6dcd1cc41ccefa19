import { z } from 'zod';
import { timestamp, uuid } from '../../http/schemas.ts';

/** Brokkr keeps cluster events for at most 6 hours (hard-coded there too; the hint below is its text). */
export const RETENTION_SECONDS = 21_600;
export const LONG_TERM_SINK_HINT =
  'Brokkr retains telemetry for at most 6 hours. For long-term log centralisation, ship to Datadog or equivalent.';
export const DEFAULT_LIMIT = 500;
export const MAX_LIMIT = 5000;

/**
 * `since` (RFC 3339) and `limit` (clamped to 1..5000, as Brokkr: 0 or a negative value becomes 1).
 * A malformed value is a 400 `invalid_query`.
 */
export const clusterEventsQuerySchema = z.object({
  since: z.iso.datetime({ offset: true }).optional().describe('Lower bound on ingestion time; clamped to at most 6 hours ago'),
  limit: z
    .string()
    .regex(/^[+-]?\d{1,18}$/, 'an integer')
    .transform((v) => Math.min(MAX_LIMIT, Math.max(1, Number(v))))
    .optional()
    .describe('Rows to return, newest first (default 500, clamped to 1..5000)'),
});

export const retentionSchema = z
  .object({
    retention_ceiling_seconds: z.number().int(),
    effective_retention_seconds: z.number().int(),
    oldest_available_ts: timestamp().nullable().describe('created_at of the oldest row retained for this stack (Brokkr: of this page)'),
    long_term_sink_hint: z.string(),
  })
  .meta({ id: 'TelemetryRetention' });

export const agentK8sEventSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    stack_id: uuid(),
    observed_at: timestamp(),
    reason: z.string(),
    message: z.string(),
    event_type: z.string(),
    source: z.string().nullable(),
    involved_object: z.object({
      api_version: z.string(),
      kind: z.string(),
      namespace: z.string().nullable(),
      name: z.string(),
      uid: z.string().nullable(),
    }),
    created_at: timestamp(),
  })
  .meta({ id: 'AgentK8sEvent' });

export const agentPodLogSchema = z
  .object({
    id: uuid(),
    agent_id: uuid(),
    stack_id: uuid(),
    namespace: z.string(),
    pod: z.string(),
    container: z.string(),
    ts: timestamp(),
    line: z.string(),
    created_at: timestamp(),
  })
  .meta({ id: 'AgentPodLog' });

export const stackEventsResponseSchema = z
  .object({ retention: retentionSchema, events: agentK8sEventSchema.array() })
  .meta({ id: 'StackEventsResponse' });
export const stackLogsResponseSchema = z
  .object({ retention: retentionSchema, lines: agentPodLogSchema.array() })
  .meta({ id: 'StackLogsResponse' });
