import { z } from 'zod';
import { servedObjectSchema } from './signatures.ts';

/**
 * Our extensions of the agent channel (`/internal/ws/agent`). An agent asks for them in its
 * upgrade request (`Brokkr-Agent-Features`, comma-separated); Brokkr's agent sends no such header
 * and keeps Brokkr's frames.
 */
export const AGENT_FEATURES_HEADER = 'brokkr-agent-features';

/** The agent can take `target_state_patch` frames instead of fetching after a `stack_changed` hint. */
export const TARGET_STATE_PATCH_FEATURE = 'target-state-patch';

/**
 * The agent checks generators' signatures (docs/signatures.md): each object of its
 * `target_state_patch` frames carries its stored signature (`signature`, as the target-state
 * answer does for `signatures=true`), and the hub sends `trust_metadata_changed` when the trust
 * metadata it relays changed. Asked for by an agent with a trust policy only.
 */
export const TARGET_STATE_SIGNATURES_FEATURE = 'target-state-signatures';

/**
 * `target_state_patch`: the agent's full target state (`mode=full`) moved from the answer whose
 * ETag is `base_etag` to the one whose ETag is `etag`, by putting each of `objects` in place of
 * the object of its stack; the result is ordered newest first (`sequence_id` descending), as a
 * target-state answer is. An agent that does not hold exactly `base_etag` fetches instead.
 */
export const targetStatePatchSchema = z.object({
  base_etag: z.string(),
  etag: z.string(),
  objects: servedObjectSchema.array().min(1),
});
export type TargetStatePatch = z.output<typeof targetStatePatchSchema>;

/** The agent's features as a hub reads them from the upgrade request's header. */
export function agentFeatures(header: string | string[] | undefined): Set<string> {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return new Set(
    text
      .split(',')
      .map((f) => f.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * The whole frame set of the agent channel, `{"type","body"}` text frames in both directions, as
 * Brokkr's agent and ours speak it. The hub sends hints (and, to an agent that asked, patches);
 * the agent sends control uplinks (each with its REST twin's effect) and telemetry
 * (telemetry.ts). Brokkr's decoding rules apply to the uplinks: every non-Option field is
 * required even when ignored, Option fields may be omitted, unknown fields are ignored.
 */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Hints: something for this agent changed; fetch (or, for `work_order`, look at the order). */
export const HINT_TYPES = ['work_order', 'target_changed', 'stack_changed'] as const;
export type HintType = (typeof HINT_TYPES)[number];

/** `target_changed`: Brokkr's shape for "fetch your target state", with nil ids. */
export const targetChangedBodySchema = z.object({ id: z.guid(), agent_id: z.guid(), stack_id: z.guid() });
export type TargetChangedBody = z.output<typeof targetChangedBodySchema>;

/**
 * `trust_metadata_changed` (to an agent that asked for TARGET_STATE_SIGNATURES_FEATURE): a trust
 * document was published (PUT /trust-metadata); the agent reads GET /trust-metadata now instead of
 * at its next periodic refresh. Its body is `{}`.
 */
export const TRUST_METADATA_CHANGED = 'trust_metadata_changed';

/** Downlinks an agent reads: a hint (its body is the order, the stack, or target_changed's nil ids), a patch, or a trust notice. */
export type AgentChannelDownlink =
  | { type: HintType; body: unknown }
  | { type: 'target_state_patch'; body: TargetStatePatch }
  | { type: typeof TRUST_METADATA_CHANGED; body: Record<string, never> };

/** Types a hub only sends: arriving on the uplink they are counted and dropped, as Brokkr does. */
export const DOWNLINK_ONLY_TYPES: readonly string[] = [...HINT_TYPES, 'target_state_patch', TRUST_METADATA_CHANGED, 'fleet_update'];

const frameTimestamp = () => z.iso.datetime({ offset: true });

/** `heartbeat` uplink: the agent is alive, and whether it reaches its Kubernetes API. */
export const heartbeatFrameBodySchema = z.object({
  agent_id: z.guid(),
  sent_at: frameTimestamp(),
  k8s_reachable: z.boolean().nullish(),
  k8s_api_latency_ms: z.number().int().nullish(),
  /** Ours (agent-api.ts' ClusterFacts), read on their own with readClusterFacts: facts that do not parse are ignored, the heartbeat is not. */
  facts: z.unknown().optional(),
});
export type HeartbeatFrameBody = z.input<typeof heartbeatFrameBodySchema>;

/** `agent_event` uplink: POST /agents/{id}/events as a frame (an AgentEvent row with a nil id). */
export const agentEventFrameBodySchema = z.object({
  id: z.guid(),
  created_at: frameTimestamp(),
  updated_at: frameTimestamp(),
  deleted_at: frameTimestamp().nullish(),
  agent_id: z.guid(),
  deployment_object_id: z.guid(),
  event_type: z.string(),
  status: z.string(),
  message: z.string().nullish(),
});
export type AgentEventFrameBody = z.input<typeof agentEventFrameBodySchema>;

/** `agent_health` uplink: one object's health, its summary a JSON string (REST takes the object). */
export const agentHealthFrameBodySchema = z.object({
  id: z.guid(),
  agent_id: z.guid(),
  deployment_object_id: z.guid(),
  status: z.string(),
  summary: z.string().nullish(),
  checked_at: frameTimestamp(),
  created_at: frameTimestamp(),
  updated_at: frameTimestamp(),
});
export type AgentHealthFrameBody = z.input<typeof agentHealthFrameBodySchema>;

export const CONTROL_UPLINK_TYPES = ['heartbeat', 'agent_event', 'agent_health'] as const;
export type ControlUplinkType = (typeof CONTROL_UPLINK_TYPES)[number];

/** Control uplinks, as the agent writes them. */
export type ControlUplink =
  | { type: 'heartbeat'; body: HeartbeatFrameBody }
  | { type: 'agent_event'; body: AgentEventFrameBody }
  | { type: 'agent_health'; body: AgentHealthFrameBody };

/** The body schema of each control uplink, as the hub reads it. */
export const CONTROL_UPLINK_BODIES = {
  heartbeat: heartbeatFrameBodySchema,
  agent_event: agentEventFrameBodySchema,
  agent_health: agentHealthFrameBodySchema,
} as const;

/** A frame's text. */
export function encodeFrame(type: string, body: unknown): string {
  return JSON.stringify({ type, body });
}
