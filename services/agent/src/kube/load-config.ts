import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * An explicit kubeconfig file wins; inside a pod, the service account; otherwise client-node's
 * usual search (KUBECONFIG, ~/.kube/config). A named file that does not exist is an error, not a
 * silent fallback to some other cluster.
 */
export function loadKubeConfig(file: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (file) {
    if (!existsSync(file)) throw new Error(`kubeconfig ${file} does not exist`);
    kc.loadFromFile(file);
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster();
  } else {
    kc.loadFromDefault();
  }
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured (kubeconfig has no current context)');
  return kc;
}
