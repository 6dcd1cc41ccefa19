import type { Grant, GrantInput } from '@brokkr/contracts';

/**
 * Kinds that reach past a namespace or change how the whole cluster admits, schedules or serves
 * objects: refused to a confined tenant even when it may place cluster-scoped objects.
 */
export const DEFAULT_REFUSED_KINDS: readonly string[] = [
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'apiregistration.k8s.io/APIService',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'scheduling.k8s.io/PriorityClass',
];

/**
 * The namespace a generator's objects go to when they name none: derived from the generator's id,
 * so renaming the generator never moves its objects, and valid whatever the generator is called.
 */
export function defaultNamespaceOf(generatorId: string): string {
  return `brokkr-${generatorId.toLowerCase().replaceAll('-', '').slice(0, 12)}`;
}

/**
 * A registration's grant with the defaults filled in. The defaults keep Brokkr's behaviour for a
 * cluster that serves one generator (whole_cluster) and confine every generator to its own
 * namespace once a second one is registered; adoption is off.
 */
export function resolveGrant(stored: GrantInput | null | undefined, generatorId: string): Grant {
  const defaults: Grant = {
    namespaces: [],
    default_namespace: defaultNamespaceOf(generatorId),
    cluster_scoped: false,
    whole_cluster: true,
    adoption: false,
    delete_adopted: false,
    refused_kinds: [...DEFAULT_REFUSED_KINDS],
  };
  const given = Object.entries(stored ?? {}).filter(([, value]) => value !== undefined && value !== null);
  return { ...defaults, ...Object.fromEntries(given) };
}

/**
 * Whether a grant reaches the whole cluster right now: the system generator's (the admin's
 * fleet-management stacks) always; a tenant's only while it asks for it and is the agent's only
 * tenant — once a second generator is registered, neither reaches past an explicit grant.
 */
export function wholeClusterInEffect(grant: Grant, isSystem: boolean, tenants: number): boolean {
  return isSystem || (grant.whole_cluster && tenants <= 1);
}
