import type { ApiResource, Discovery } from '../kube/discovery.ts';
import type { KubeObjects, ObjectMeta } from '../kube/objects.ts';
import { CHECKSUM_ANNOTATION, OBJECT_ID_ANNOTATION, OWNER_LABEL, STACK_LABEL } from '../manifest/keys.ts';
import { mapLimit } from '../util/async.ts';

/** One object in the cluster that carries this agent's owner label. */
export interface LiveObject {
  resource: ApiResource;
  meta: ObjectMeta;
  stackId: string;
  /** `''` when the annotation is missing (it then never matches a deployment object's checksum). */
  checksum: string;
  objectId: string | undefined;
}

export interface Inventory {
  byStack: Map<string, LiveObject[]>;
  /** `<group>/<kind>/<namespace>/<name>` of every live object, whatever its stack. */
  byKey: Map<string, LiveObject>;
  /** Types that could not be listed (RBAC, aggregated API down): what they hold is unknown. */
  failures: string[];
}

export interface InventoryScope {
  objects: KubeObjects;
  discovery: Discovery;
  agentId: string;
  watchNamespace: string | undefined;
  concurrency: number;
}

export function objectKey(resource: { group: string; kind: string }, namespace: string | undefined, name: string): string {
  return `${resource.group}/${resource.kind}/${namespace ?? ''}/${name}`;
}

/** The objects a failed listing would have hidden are not ours to judge: callers only act on what was seen. */
export class InventoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InventoryError';
  }
}

/**
 * Everything this agent owns, by label selector over every listable type (docs/compatibility.md: no
 * client-side filtering of every object in the cluster). Namespaced types are listed in the
 * watched namespace only when one is set. Objects served under two groups (core and
 * events.k8s.io Events) are counted once, by uid.
 */
export async function takeInventory(scope: InventoryScope): Promise<Inventory> {
  const { resources, failures } = await scope.discovery.listable();
  const selector = `${OWNER_LABEL}=${scope.agentId},${STACK_LABEL}`;
  const listed = await mapLimit(resources, scope.concurrency, (r) =>
    scope.objects.listMetadata(r, selector, r.namespaced ? scope.watchNamespace : undefined),
  );
  const inventory: Inventory = { byStack: new Map(), byKey: new Map(), failures: [...failures] };
  const seen = new Set<string>();
  listed.forEach((result, i) => {
    const resource = resources[i]!;
    if (result.status === 'rejected') {
      inventory.failures.push(`${resource.apiVersion}/${resource.plural}: ${(result.reason as Error).message}`);
      return;
    }
    for (const meta of result.value) {
      if (seen.has(meta.uid)) continue;
      seen.add(meta.uid);
      add(inventory, resource, meta);
    }
  });
  if (resources.length > 0 && inventory.failures.length >= resources.length) {
    throw new InventoryError(`every resource listing failed; check the agent's RBAC: ${inventory.failures.slice(0, 3).join('; ')}`);
  }
  return inventory;
}

function add(inventory: Inventory, resource: ApiResource, meta: ObjectMeta): void {
  const stackId = meta.labels?.[STACK_LABEL];
  if (!stackId) return;
  const live: LiveObject = {
    resource,
    meta,
    stackId,
    checksum: meta.annotations?.[CHECKSUM_ANNOTATION] ?? '',
    objectId: meta.annotations?.[OBJECT_ID_ANNOTATION],
  };
  const list = inventory.byStack.get(stackId) ?? [];
  list.push(live);
  inventory.byStack.set(stackId, list);
  inventory.byKey.set(objectKey(resource, meta.namespace, meta.name), live);
}
