export { startClusterEvents, type RunningClusterEvents, type ClusterEventsOptions } from './start.ts';
export type { ClusterEventsChannel } from './channel.ts';
export type { LogSource, LogStreamRequest } from './log-source.ts';
