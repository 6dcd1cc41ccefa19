/**
 * Real clusters for tests (the infra starters, plus a client-node KubeConfig). `startKubeApiServer`:
 * kube-apiserver + etcd only, for tests that need just the API. `startKubeCluster`: also the
 * controllers, the scheduler and KWOK's simulated nodes, so Deployments get Pods that become Ready
 * (or, on request, never-ready or crash-looping) and Jobs complete or fail — the signal a real
 * cluster gives. Binaries come from KUBEBUILDER_ASSETS or the cache; when neither has them they are
 * built first (minutes, once), so `npm test` on a bare machine needs nothing beforehand.
 */
import { KubeConfig } from '@kubernetes/client-node';
import {
  ensureKubeAssets,
  findKubeAssets as findCachedKubeAssets,
  startKubeApiServer as startInfraKubeApiServer,
  startKubeCluster as startInfraKubeCluster,
  type KubeApiServerHandle,
  type KubeClusterHandle,
  type KubeUser,
} from '@brokkr/infra';
import { timedStop, usingInfrastructure } from './tier.ts';

export type TestKubeUser = KubeUser;

export interface KubeApiServer extends KubeApiServerHandle {
  kubeConfig: KubeConfig;
  /** Writes a kubeconfig for one of the extra users given to startKubeApiServer. */
  kubeconfigFor(user: string): Promise<string>;
}

export interface StartKubeApiServerOptions {
  /** Users besides the admin, authenticated by token (for RBAC tests). */
  users?: TestKubeUser[];
  log?: (line: string) => void;
}

export interface KubeCluster extends KubeApiServer {
  nodeNames: string[];
  /** Every container's log (KWOK serves it); appendPodLog adds a line to it. */
  podLogFile: string;
  appendPodLog(text: string): Promise<void>;
}

export interface StartKubeClusterOptions extends StartKubeApiServerOptions {
  /** Simulated nodes (default 2). */
  nodes?: number;
  /** false: every pod becomes Ready whatever its image (no failures on request). */
  failures?: boolean;
}

/** The directory holding kube-apiserver and etcd, building them when missing. */
export async function findKubeAssets(): Promise<string> {
  return ensureKubeAssets({ onProgress: (line) => process.stderr.write(`${line}\n`) });
}

/** True when the binaries are there already. */
export function kubeAssetsAvailable(): boolean {
  return findCachedKubeAssets('full') !== undefined;
}

export function startKubeApiServer(options: StartKubeApiServerOptions = {}): Promise<KubeApiServer> {
  return usingInfrastructure('kube-apiserver', async () => {
    await findKubeAssets();
    const handle = await startInfraKubeApiServer(options);
    return withKubeConfig({ ...handle, stop: timedStop('kube-apiserver', handle.stop) });
  });
}

export function startKubeCluster(options: StartKubeClusterOptions = {}): Promise<KubeCluster> {
  return usingInfrastructure('kube cluster (KWOK)', async () => {
    await findKubeAssets();
    const started: KubeClusterHandle = await startInfraKubeCluster(options);
    const handle = { ...started, stop: timedStop('kube cluster (KWOK)', started.stop) };
    return { ...withKubeConfig(handle), nodeNames: handle.nodeNames, podLogFile: handle.podLogFile, appendPodLog: handle.appendPodLog };
  });
}

function withKubeConfig(handle: KubeApiServerHandle): KubeApiServer {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(handle.kubeconfigPath);
  return {
    ...handle,
    kubeConfig,
    async kubeconfigFor(name) {
      const token = handle.userTokens.get(name);
      if (!token) throw new Error(`unknown test user ${name}`);
      return handle.kubeconfigWithToken(name, token);
    },
  };
}
