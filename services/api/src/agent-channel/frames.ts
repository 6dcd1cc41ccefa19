import { z } from 'zod';
import {
  CONTROL_UPLINK_TYPES,
  DOWNLINK_ONLY_TYPES,
  TELEMETRY_FRAME_TYPES,
  type ControlUplinkType,
  type TelemetryFrame,
} from '@brokkr/contracts';

/** The frames themselves are @brokkr/contracts' (agent-channel.ts): this is how the hub sorts what arrives. */
export type { ControlUplinkType } from '@brokkr/contracts';
export type TelemetryUplinkType = TelemetryFrame['type'];

const CONTROL_UPLINKS = new Set<string>(CONTROL_UPLINK_TYPES);
const TELEMETRY_UPLINKS = new Set<string>(TELEMETRY_FRAME_TYPES);
/** Downlink-only variants: counted when they arrive on the uplink, then dropped (as Brokkr does). */
const DOWNLINK_ONLY = new Set<string>(DOWNLINK_ONLY_TYPES);

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
