import type { TelemetryFrameInput } from '@brokkr/contracts';

/**
 * What the cluster-event streamers need from the agent channel (services/agent/src/agent-channel/):
 * a bounded, lower-priority lane to the hub. `sendTelemetry` returns false when the frame was not
 * taken (channel down, or the lane is full); Brokkr has no REST fallback for them.
 */
export interface ClusterEventsChannel {
  sendTelemetry(frame: TelemetryFrameInput): boolean;
  readonly state: string;
  on(event: 'state', listener: (state: string) => void): unknown;
  off?(event: 'state', listener: (state: string) => void): unknown;
}
