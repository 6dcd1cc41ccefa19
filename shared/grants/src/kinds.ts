/** `<group>/<Kind>`, or the kind alone for the core group: how grants name kinds. */
export function kindReferenceOf(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}

/**
 * Built-in cluster-scoped kinds. The agent asks its cluster's discovery; the hub, which checks a
 * submitted object before any agent sees it, knows only the built-in kinds (this list and the
 * namespaced ones below) and leaves every other kind without a namespace to the agent.
 */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'scheduling.k8s.io/PriorityClass',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'certificates.k8s.io/CertificateSigningRequest',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
]);

const NAMESPACED_CORE = new Set([
  'Pod',
  'ConfigMap',
  'Secret',
  'Service',
  'ServiceAccount',
  'PersistentVolumeClaim',
  'ResourceQuota',
  'LimitRange',
  'Endpoints',
  'Event',
  'ReplicationController',
  'PodTemplate',
]);
const NAMESPACED_GROUPS = new Set(['apps', 'batch', 'autoscaling', 'coordination.k8s.io', 'discovery.k8s.io']);
const NAMESPACED_OTHERS = new Set([
  'policy/PodDisruptionBudget',
  'networking.k8s.io/Ingress',
  'networking.k8s.io/NetworkPolicy',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
]);

/** Whether a built-in kind is namespaced; undefined for a kind the hub does not know (a custom resource). */
export function builtInNamespaced(kindReference: string): boolean | undefined {
  if (CLUSTER_SCOPED.has(kindReference)) return false;
  const slash = kindReference.indexOf('/');
  if (slash < 0) return NAMESPACED_CORE.has(kindReference) ? true : undefined;
  if (NAMESPACED_GROUPS.has(kindReference.slice(0, slash)) || NAMESPACED_OTHERS.has(kindReference)) return true;
  return undefined;
}

/**
 * Kinds that constrain everything else in their namespace (what may run there, what may reach
 * it): in a namespace another tenant may use too, one of these is a denial of service.
 */
export const NAMESPACE_POLICY_KINDS: ReadonlySet<string> = new Set(['ResourceQuota', 'LimitRange', 'networking.k8s.io/NetworkPolicy']);
