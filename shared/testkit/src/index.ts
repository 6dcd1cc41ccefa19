export { createTestDatabase, createEmptyDatabase, withDatabase, type TestDatabase } from './database.ts';
export {
  startTestNats,
  natsUserEnv,
  serviceBusSettings,
  testOnlyBusSettings,
  testOnlyNatsOptions,
  TEST_ONLY_NATS_USER,
  type TestNatsHandle,
  type TestNatsUser,
} from './nats.ts';
export type { NatsHandle } from '@brokkr/infra';
export { useTestInfra, type TestInfra, type TestInfraOptions } from './infra.ts';
export {
  startWebhookReceiver,
  type ReceivedRequest,
  type Reply,
  type Responder,
  type WaitForOptions,
  type WebhookReceiver,
} from './webhook-receiver.ts';
export { TestClient, type AnyJson, type ClientResponse, type RequestOptions } from './client.ts';
export { spawnService, type RunningService, type SpawnServiceOptions } from './service.ts';
export { spawnRenderer, type SpawnRendererOptions, type TestRenderer } from './renderer.ts';
export { eventually } from './wait.ts';
export { freePort } from '@brokkr/infra';
export {
  startKubeApiServer,
  startKubeCluster,
  findKubeAssets,
  kubeAssetsAvailable,
  type KubeApiServer,
  type KubeCluster,
  type StartKubeApiServerOptions,
  type StartKubeClusterOptions,
  type TestKubeUser,
} from './kube.ts';
export { fixtureChartDir, fixtureKustomizeDir, packChart, type PackagedChart } from './charts.ts';
export { packDirectory, directoryEntries, tarGz, type TarEntry } from './tar.ts';
export { startChartRepository, type ChartRepository, type ChartRepositoryOptions, type RouteHandler } from './chart-repository.ts';
export {
  startOciRegistry,
  pushChart,
  pushArtifact,
  type OciRegistry,
  type PushArtifact,
  type PushedChart,
  type StartOciRegistryOptions,
} from './oci-registry.ts';
