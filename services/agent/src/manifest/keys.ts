/**
 * The labels and annotations the agent stamps on everything it applies. The stack and owner are
 * LABELS so the agent finds its objects with a label selector; the annotations are
 * Brokkr's, kept for tools that read them.
 */
export const STACK_LABEL = 'k8s.brokkr.io/stack';
export const OWNER_LABEL = 'brokkr.io/owner-id';
export const CHECKSUM_ANNOTATION = 'k8s.brokkr.io/deployment-checksum';
export const OBJECT_ID_ANNOTATION = 'brokkr.io/deployment-object-id';
export const LAST_APPLIED_ANNOTATION = 'k8s.brokkr.io/last-config-applied';
/** Brokkr also writes the stack and the owner as annotations. */
export const STACK_ANNOTATION = STACK_LABEL;
export const OWNER_ANNOTATION = OWNER_LABEL;

/** The one field manager for every apply, so each apply owns exactly the fields of the last one. */
export const FIELD_MANAGER = 'brokkr-agent';
/**
 * Set to "true" on an object in a stack's manifest, it lets the stack adopt a live object of the
 * same name that no stack manages (docs/security.md, "Agents in shared clusters"). Objects another
 * stack's label claims are never adopted.
 */
export const ADOPT_ANNOTATION = 'brokkr.io/adopt-existing';
/** On every object a work order applies or creates (never a stack label: reconciliation leaves them alone). */
export const WORK_ORDER_LABEL = 'brokkr.io/work-order-id';
/**
 * On an object a stack adopted (it existed, no stack managed it): deleting or pruning the stack
 * gives it back (our labels removed) instead of deleting it, unless the stack's grant says
 * delete_adopted (docs/security.md, "Tenants confined in shared clusters").
 */
export const ADOPTED_ANNOTATION = 'brokkr.io/adopted';
/** The Pod Security Standard labels the agent sets on a confined generator's namespaces. */
export const POD_SECURITY_LABELS = [
  'pod-security.kubernetes.io/enforce',
  'pod-security.kubernetes.io/audit',
  'pod-security.kubernetes.io/warn',
] as const;
/** On the namespace the agent creates for a confined generator: whose it is. */
export const GENERATOR_LABEL = 'k8s.brokkr.io/generator';
/**
 * An integer (negative allowed, default 0) on an object of a stack's manifest: its wave. Waves are
 * applied in ascending order, each once the one before is healthy, and deleted highest first
 * (reconcile/waves.ts).
 */
export const WAVE_ANNOTATION = 'brokkr.io/wave';
