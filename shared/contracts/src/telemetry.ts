import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

/**
 * The agent → hub telemetry frames of Brokkr's live channel, and what the
 * hub forwards to `/api/v1/stacks/{id}/live` subscribers. Bodies are exactly Brokkr's:
 * every non-optional field is required, unknown extra fields are ignored, optional ones may be
 * omitted (read as null) and are always serialised as null.
 */

/** RFC 3339 with any offset on input (the agent's `now()` may carry 9 fractional digits). */
const rfc3339 = () => z.iso.datetime({ offset: true });

export const involvedObjectSchema = z.object({
  api_version: z.string(),
  kind: z.string(),
  namespace: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  name: z.string(),
  uid: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
});
export type InvolvedObject = z.output<typeof involvedObjectSchema>;

/** `k8s_event`: one Kubernetes Event about an object of the stack. */
export const k8sEventFrameBodySchema = z.object({
  agent_id: uuid(),
  stack_id: uuid(),
  observed_at: rfc3339(),
  reason: z.string(),
  message: z.string(),
  event_type: z.string(),
  source: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  involved_object: involvedObjectSchema,
});
export type K8sEventFrameBody = z.output<typeof k8sEventFrameBodySchema>;

/** `pod_log_line`: one line of an opted-in container's log (without its newline). */
export const podLogLineFrameBodySchema = z.object({
  agent_id: uuid(),
  stack_id: uuid(),
  namespace: z.string(),
  pod: z.string(),
  container: z.string(),
  ts: rfc3339(),
  line: z.string(),
});
export type PodLogLineFrameBody = z.output<typeof podLogLineFrameBodySchema>;

export const LOG_GAP_REASONS = ['rate_limit', 'buffer_full', 'disconnected'] as const;

/** `log_gap`: lines were dropped (never stored; live subscribers only). */
export const logGapFrameBodySchema = z.object({
  agent_id: uuid(),
  stack_id: uuid(),
  since_ts: rfc3339(),
  dropped_count: z.number().int().min(0),
  reason: z.enum(LOG_GAP_REASONS),
});
export type LogGapFrameBody = z.output<typeof logGapFrameBodySchema>;

/** A telemetry frame as it travels on the wire (`{"type","body"}`). */
export const telemetryFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('k8s_event'), body: k8sEventFrameBodySchema }),
  z.object({ type: z.literal('pod_log_line'), body: podLogLineFrameBodySchema }),
  z.object({ type: z.literal('log_gap'), body: logGapFrameBodySchema }),
]);
export type TelemetryFrame = z.output<typeof telemetryFrameSchema>;
export type TelemetryFrameInput = z.input<typeof telemetryFrameSchema>;
export const TELEMETRY_FRAME_TYPES = ['k8s_event', 'pod_log_line', 'log_gap'] as const;

/**
 * `brokkr.live.fleet` (core NATS): the agent's fleet record may have changed. `ws_connected_since`
 * is set by the replica holding the agent's live-channel socket (so every replica knows which
 * agents are connected somewhere); `reason: "disconnected"` comes from the replica that lost it.
 */
export const fleetNoticeSchema = z.object({
  agent_id: uuid(),
  reason: z.enum(['heartbeat', 'connected', 'disconnected']),
  ws_connected_since: rfc3339().nullable(),
});
export type FleetNotice = z.output<typeof fleetNoticeSchema>;

/** Brokkr's FleetAgentRecord: all 17 keys always present. REST and `fleet_update` alike. */
export const fleetAgentRecordSchema = z
  .object({
    agent_id: uuid(),
    name: z.string(),
    cluster_name: z.string(),
    status: z.string(),
    ws_connected: z.boolean().describe('The agent holds a live-channel WebSocket on some api replica'),
    connected_since: timestamp().nullable(),
    last_heartbeat: timestamp().nullable(),
    heartbeat_age_seconds: z.number().int().nullable(),
    pending_object_count: z.number().int(),
    pending_work_orders: z.number().int(),
    claimed_work_orders: z.number().int(),
    last_event_at: timestamp().nullable(),
    seconds_since_last_event: z.number().int().nullable(),
    health_failing: z.number().int(),
    health_degraded: z.number().int(),
    k8s_reachable: z.boolean().nullable(),
    k8s_api_latency_ms: z.number().int().nullable(),
  })
  .meta({ id: 'FleetAgentRecord' });
export type FleetAgentRecord = z.output<typeof fleetAgentRecordSchema>;
