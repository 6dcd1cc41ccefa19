import type { Logger } from '@brokkr/logger';
import type { KubeObjects } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import { mapLimit } from '../util/async.ts';
import { ReconcileError } from './errors.ts';
import type { LiveObject } from './inventory.ts';

export interface PruneContext {
  objects: KubeObjects;
  metrics: AgentMetrics;
  logger: Logger;
  concurrency: number;
}

/**
 * What may be deleted at all: never an object something else owns through ownerReferences (its
 * owner's garbage collection decides), never one already being deleted.
 */
export function removable(live: LiveObject[]): LiveObject[] {
  return live.filter((o) => !o.meta.ownerReferences?.length && !o.meta.deletionTimestamp);
}

/**
 * Objects of the stack left over from an earlier deployment object: another checksum, not
 * re-applied by this pass. A Namespace that still holds objects of the current deployment
 * object is kept even if the new manifest no longer lists it (deleting it would take them along).
 */
export function staleObjects(live: LiveObject[], checksum: string, keepUids: Set<string>, keepNamespaces: Set<string>): LiveObject[] {
  return removable(live).filter(
    (o) =>
      o.checksum !== checksum &&
      !keepUids.has(o.meta.uid) &&
      !(o.resource.kind === 'Namespace' && !o.resource.group && keepNamespaces.has(o.meta.name)),
  );
}

/** Dependents before what they depend on: namespaced objects, cluster-scoped ones, Namespaces, CRDs last. */
function deletionRank(o: LiveObject): number {
  if (o.resource.kind === 'CustomResourceDefinition' && o.resource.group === 'apiextensions.k8s.io') return 3;
  if (o.resource.kind === 'Namespace' && !o.resource.group) return 2;
  return o.resource.namespaced ? 0 : 1;
}

const label = (o: LiveObject) => `${o.resource.kind}:${o.meta.name}${o.meta.namespace ? `@${o.meta.namespace}` : ''}`;

/** Deletes the objects in dependency order; every object is attempted, failures are reported together. */
export async function deleteObjects(ctx: PruneContext, objects: LiveObject[]): Promise<number> {
  let deleted = 0;
  const errors: string[] = [];
  for (const rank of [0, 1, 2, 3]) {
    const batch = objects.filter((o) => deletionRank(o) === rank);
    const results = await mapLimit(batch, ctx.concurrency, (o) => ctx.objects.delete(o.resource, o.meta.namespace, o.meta.name));
    results.forEach((r, i) => {
      const o = batch[i]!;
      if (r.status === 'rejected') errors.push(`${label(o)}: ${(r.reason as Error).message}`);
      else if (r.value) {
        deleted++;
        ctx.metrics.pruneDeletions.inc({ kind: o.resource.kind });
        ctx.logger.info({ kind: o.resource.kind, name: o.meta.name, namespace: o.meta.namespace, stack: o.stackId }, 'deleted');
      }
    });
  }
  if (errors.length) throw new ReconcileError(errors, `deleting ${errors.length} object(s) failed:`);
  return deleted;
}
