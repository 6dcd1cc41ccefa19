/**
 * A real kube-apiserver + etcd for tests (the infra starter, plus a client-node KubeConfig). Binaries
 * come from KUBEBUILDER_ASSETS or the cache; when neither has them they are built first (minutes,
 * once), so `npm test` on a bare machine needs nothing beforehand. Pods and Jobs never run here:
 * tests patch their status to play the kubelet.
 */
import { KubeConfig } from '@kubernetes/client-node';
import {
  ensureKubeAssets,
  findKubeAssets as findCachedKubeAssets,
  startKubeApiServer as startInfraKubeApiServer,
  type KubeApiServerHandle,
  type KubeUser,
} from '@brokkr/infra';

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

/** The directory holding kube-apiserver and etcd, building them when missing. */
export async function findKubeAssets(): Promise<string> {
  return ensureKubeAssets({ onProgress: (line) => process.stderr.write(`${line}\n`) });
}

/** True when the binaries are there already. */
export function kubeAssetsAvailable(): boolean {
  return findCachedKubeAssets() !== undefined;
}

export async function startKubeApiServer(options: StartKubeApiServerOptions = {}): Promise<KubeApiServer> {
  await findKubeAssets();
  const handle = await startInfraKubeApiServer(options);
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
