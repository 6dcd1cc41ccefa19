export { createTestDatabase, createEmptyDatabase, withDatabase, type TestDatabase } from './database.ts';
export { startTestNats } from './nats.ts';
export { spawnService, type RunningService, type SpawnServiceOptions } from './service.ts';
export { eventually } from './wait.ts';
export { freePort } from '@brokkr/infra';
export { startKubeApiServer, findKubeAssets, kubeAssetsAvailable, type KubeApiServer, type StartKubeApiServerOptions, type TestKubeUser } from './kube.ts';
