import { z } from 'zod';

/** Frames the broker sends on the agent channel. */
export type HintType = 'work_order' | 'target_changed' | 'stack_changed';
export type ControlUplinkType = 'heartbeat' | 'agent_event' | 'agent_health';
export type TelemetryUplinkType = 'k8s_event' | 'pod_log_line' | 'log_gap';

const CONTROL_UPLINKS = new Set<string>(['heartbeat', 'agent_event', 'agent_health']);
const TELEMETRY_UPLINKS = new Set<string>(['k8s_event', 'pod_log_line', 'log_gap']);
/** Downlink-only variants: counted when they arrive on the uplink, then dropped (as Brokkr does). */
const DOWNLINK_ONLY = new Set<string>(['work_order', 'target_changed', 'stack_changed', 'fleet_update']);

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export type DecodedFrame =
  | { lane: 'control'; type: ControlUplinkType; body: unknown }
  | { lane: 'telemetry'; type: TelemetryUplinkType; body: unknown }
  | { lane: 'ignored'; type: string };

const envelope = z.object({ type: z.string(), body: z.unknown().refine((b) => b !== undefined, 'body is required') });

/** `{"type","body"}` → a frame for a lane; undefined for an undecodable or unknown frame (dropped, connection kept). */
export function decodeFrame(text: string): DecodedFrame | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = envelope.safeParse(json);
  if (!parsed.success) return undefined;
  const { type, body } = parsed.data;
  if (CONTROL_UPLINKS.has(type)) return { lane: 'control', type: type as ControlUplinkType, body };
  if (TELEMETRY_UPLINKS.has(type)) return { lane: 'telemetry', type: type as TelemetryUplinkType, body };
  if (DOWNLINK_ONLY.has(type)) return { lane: 'ignored', type };
  return undefined;
}

export function encodeFrame(type: string, body: unknown): string {
  return JSON.stringify({ type, body });
}
