export { startPostgres, findPostgresBin, type PostgresHandle, type StartPostgresOptions } from './postgres.ts';
export { startNats, findNatsServer, pinnedNatsVersion, type NatsHandle, type StartNatsOptions } from './nats.ts';
export { freePort, waitForPort } from './ports.ts';
export { createTestCa, type TestCa } from './test-ca.ts';
export { startGuarded, type GuardedProcess, type GuardOptions } from './guarded-process.ts';
export { repoRoot, scriptsDir, cacheDir } from './paths.ts';
export { findKubeAssets, ensureKubeAssets, type EnsureKubeAssetsOptions, type KubeAssetsKind } from './kube-assets.ts';
export { startKubeApiServer, type KubeApiServerHandle, type KubeUser, type StartKubeApiServerOptions } from './kube-apiserver.ts';
export { startKubeCluster, type KubeClusterHandle, type StartKubeClusterOptions } from './kube-cluster.ts';
