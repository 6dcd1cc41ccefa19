import { createHash } from 'node:crypto';

/** What a chart is rendered against: `.Capabilities.KubeVersion` and `.Capabilities.APIVersions`. */
export interface Capabilities {
  kubeVersion: string;
  apiVersions: string[];
}

/**
 * For an agent that reports nothing about its cluster (Brokkr's agent, or ours before its first
 * heartbeat): the version of the Kubernetes the hub's own tests and local cluster run, and only the
 * core API versions every cluster serves. Charts that probe for more see them missing.
 */
export const DEFAULT_CAPABILITIES: Capabilities = {
  kubeVersion: 'v1.33.0',
  apiVersions: ['v1', 'apps/v1', 'batch/v1', 'networking.k8s.io/v1', 'policy/v1', 'rbac.authorization.k8s.io/v1', 'autoscaling/v2'],
};

/** The Capabilities of an agent's cluster from its reported facts, else the defaults. */
export function capabilitiesOf(facts: Record<string, unknown>): Capabilities {
  const kubeVersion = typeof facts.kubernetes_version === 'string' ? facts.kubernetes_version : undefined;
  const apiVersions = Array.isArray(facts.api_versions) ? facts.api_versions.filter((v): v is string => typeof v === 'string') : undefined;
  if (!kubeVersion) return DEFAULT_CAPABILITIES;
  return { kubeVersion, apiVersions: [...new Set(apiVersions ?? DEFAULT_CAPABILITIES.apiVersions)].sort() };
}

/** Agents whose clusters render alike: the same version and API versions. */
export function capabilityClass(capabilities: Capabilities): string {
  return createHash('sha256')
    .update(`${capabilities.kubeVersion}\n${capabilities.apiVersions.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
}
