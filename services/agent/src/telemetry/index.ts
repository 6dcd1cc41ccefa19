export { startTelemetry, type RunningTelemetry, type TelemetryOptions } from './start.ts';
export type { TelemetryChannel } from './channel.ts';
export type { LogSource, LogStreamRequest } from './log-source.ts';
