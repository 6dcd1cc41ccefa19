import type { KubeObject } from './parse.ts';
import {
  ADOPTED_ANNOTATION,
  CHECKSUM_ANNOTATION,
  LAST_APPLIED_ANNOTATION,
  OBJECT_ID_ANNOTATION,
  OWNER_ANNOTATION,
  OWNER_LABEL,
  POD_SECURITY_LABELS,
  STACK_ANNOTATION,
  STACK_LABEL,
} from './keys.ts';

export interface StampContext {
  stackId: string;
  checksum: string;
  objectId: string;
  agentId: string;
  /**
   * Set when the stack's grant confines it: the Pod Security Standard its Namespaces get,
   * whatever the manifest says (a confined tenant must not run pods on the host).
   */
  podSecurity?: 'baseline' | 'restricted' | undefined;
}

/**
 * A copy of the object carrying our labels and annotations (ours win over the manifest's on a
 * clash) in the namespace it will be applied to. `owned` is false for an object that already
 * existed without our owner label: we then leave the owner label off, so we never prune or delete
 * it (see the README's ownership policy). `adopted` marks an object the stack took over (keys.ts).
 */
/** How an object is placed: whether it is (or becomes) ours, its namespace, whether the stack adopted it. */
export interface StampPlacement {
  owned: boolean;
  namespace: string | undefined;
  adopted: boolean;
}

export function stamp(object: KubeObject, ctx: StampContext, placement: StampPlacement): KubeObject {
  const { owned, namespace, adopted } = placement;
  const copy = structuredClone(object);
  const labels: Record<string, string> = { ...(copy.metadata.labels ?? {}), [STACK_LABEL]: ctx.stackId };
  if (ctx.podSecurity && copy.kind === 'Namespace' && copy.apiVersion === 'v1') {
    for (const key of POD_SECURITY_LABELS) labels[key] = ctx.podSecurity;
  }
  const annotations: Record<string, string> = {
    ...(copy.metadata.annotations ?? {}),
    [STACK_ANNOTATION]: ctx.stackId,
    [CHECKSUM_ANNOTATION]: ctx.checksum,
    [OBJECT_ID_ANNOTATION]: ctx.objectId,
    [LAST_APPLIED_ANNOTATION]: ctx.checksum,
  };
  if (owned) {
    labels[OWNER_LABEL] = ctx.agentId;
    annotations[OWNER_ANNOTATION] = ctx.agentId;
  } else {
    delete labels[OWNER_LABEL];
    delete annotations[OWNER_ANNOTATION];
  }
  if (adopted) annotations[ADOPTED_ANNOTATION] = 'true';
  else delete annotations[ADOPTED_ANNOTATION];
  copy.metadata.labels = labels;
  copy.metadata.annotations = annotations;
  if (namespace === undefined) delete copy.metadata.namespace;
  else copy.metadata.namespace = namespace;
  return copy;
}
