export { runHubService, type HubContext, type HubConfig, type HubServiceDefinition, type RunningWork } from './hub-service.ts';
export { onTerminationSignal } from './shutdown.ts';
