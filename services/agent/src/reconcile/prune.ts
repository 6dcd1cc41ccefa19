import type { Logger } from '@brokkr/logger';
import { isNotFound } from '../kube/errors.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import { mapLimit } from '../util/async.ts';
import { ReconcileError } from './errors.ts';
import {
  ADOPTED_ANNOTATION,
  CHECKSUM_ANNOTATION,
  LAST_APPLIED_ANNOTATION,
  OBJECT_ID_ANNOTATION,
  OWNER_ANNOTATION,
  OWNER_LABEL,
  STACK_ANNOTATION,
  STACK_LABEL,
} from '../manifest/keys.ts';
import type { Inventory, LiveObject } from './inventory.ts';
import { deletionBatches } from './waves.ts';

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

/**
 * Namespaces that hold live objects of a stack other than `stackId`: deleting `stackId`'s Namespace
 * object there would take another tenant's objects along, so it is kept.
 */
export function keepSharedNamespaces(objects: LiveObject[], inventory: Inventory, stackId: string): LiveObject[] {
  const shared = new Set<string>();
  for (const [stack, live] of inventory.byStack) {
    if (stack === stackId) continue;
    for (const o of live) if (o.meta.namespace) shared.add(o.meta.namespace);
  }
  return objects.filter((o) => !(o.resource.kind === 'Namespace' && !o.resource.group && shared.has(o.meta.name)));
}

/** Whether the stack adopted the object (it existed before the stack took it over). */
export const wasAdopted = (o: LiveObject) => o.meta.annotations?.[ADOPTED_ANNOTATION] === 'true';

/** What giving an object back removes: every label and annotation the agent stamped. */
const RELEASE_PATCH = {
  metadata: {
    labels: { [STACK_LABEL]: null, [OWNER_LABEL]: null },
    annotations: Object.fromEntries(
      [STACK_ANNOTATION, OWNER_ANNOTATION, CHECKSUM_ANNOTATION, OBJECT_ID_ANNOTATION, LAST_APPLIED_ANNOTATION, ADOPTED_ANNOTATION].map(
        (k) => [k, null],
      ),
    ),
  },
};

const label = (o: LiveObject) => `${o.resource.kind}:${o.meta.name}${o.meta.namespace ? `@${o.meta.namespace}` : ''}`;

/**
 * Deletes the objects in dependency order (reconcile/waves.ts: highest wave first, within a wave
 * namespaced objects before cluster-scoped ones, then Namespaces, CRDs last), each batch once the
 * previous one's deletions were accepted (not once its objects are gone); every object is attempted, failures are reported
 * together. An object `release` says to give back (one the stack adopted) is not deleted: the
 * agent's labels and annotations are taken off it, and it is nobody's again, as before.
 */
export async function deleteObjects(
  ctx: PruneContext,
  objects: LiveObject[],
  release: (o: LiveObject) => boolean = () => false,
): Promise<number> {
  let deleted = 0;
  const errors: string[] = [];
  for (const batch of deletionBatches(objects)) {
    const results = await mapLimit(batch, ctx.concurrency, (o) => dispose(ctx, o, release(o)));
    results.forEach((r, i) => {
      const o = batch[i]!;
      if (r.status === 'rejected') errors.push(`${label(o)}: ${(r.reason as Error).message}`);
      else if (r.value === 'deleted') {
        deleted++;
        ctx.metrics.pruneDeletions.inc({ kind: o.resource.kind });
        ctx.logger.info({ kind: o.resource.kind, name: o.meta.name, namespace: o.meta.namespace, stack: o.stackId }, 'deleted');
      } else if (r.value === 'released') {
        ctx.logger.info({ kind: o.resource.kind, name: o.meta.name, namespace: o.meta.namespace, stack: o.stackId }, 'released (adopted)');
      }
    });
  }
  if (errors.length) throw new ReconcileError(errors, `deleting ${errors.length} object(s) failed:`);
  return deleted;
}

async function dispose(ctx: PruneContext, o: LiveObject, release: boolean): Promise<'deleted' | 'released' | 'gone'> {
  if (release) {
    try {
      await ctx.objects.mergePatch(o.resource, o.meta.namespace, o.meta.name, RELEASE_PATCH);
      return 'released';
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      throw err;
    }
  }
  return (await ctx.objects.delete(o.resource, o.meta.namespace, o.meta.name)) ? 'deleted' : 'gone';
}
