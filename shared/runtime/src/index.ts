export { runService, type RunningWork, type ServiceDefinition } from './service.ts';
export { runHubService, type HubContext, type HubConfig, type HubServiceDefinition } from './hub-service.ts';
export { onTerminationSignal } from './shutdown.ts';
export { startMemoryRelease, type MemoryRelease, type MemoryReleased, type MemoryReleaseOptions } from './memory-release.ts';
