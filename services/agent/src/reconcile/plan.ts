import { defaultNamespaceFor, placementRefusal, type PlacementScope } from '@brokkr/grants';
import type { Discovery, ApiResource } from '../kube/discovery.ts';
import type { KubeObjects, LiveResource, ObjectMeta } from '../kube/objects.ts';
import { ADOPTED_ANNOTATION } from '../manifest/keys.ts';
import type { KubeObject } from '../manifest/parse.ts';
import { stamp, type StampContext, type StampPlacement } from '../manifest/stamp.ts';
import { mapLimit } from '../util/async.ts';
import { ReconcileError } from './errors.ts';
import { objectKey, type Inventory } from './inventory.ts';
import { ownedAfterApply, type Claim, type ClaimRule } from './ownership.ts';

/** One manifest object, resolved to its resource type and namespace and stamped, ready to apply. */
export interface PlannedObject {
  object: KubeObject;
  resource: ApiResource;
  namespace: string | undefined;
  key: string;
  /** It existed before this pass (ours or someone else's). */
  existed: boolean;
  /** It carries (or will carry) our owner label; false for someone else's object of the same name. */
  owned: boolean;
  previousVersion: string | undefined;
  /** What the apply returned (set once applied). */
  live?: LiveResource;
}

export interface PlanContext {
  objects: KubeObjects;
  discovery: Discovery;
  agentId: string;
  watchNamespace: string | undefined;
  concurrency: number;
  inventory: Inventory;
  /** Where these objects may go (@brokkr/grants): every object is judged before anything is read or written. */
  scope: PlacementScope;
}

export const describe = (o: { kind: string; metadata: { name: string; namespace?: string } }): string =>
  `${o.kind} '${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}'`;

/** Stamps an object for apply: a deployment object's labels and annotations, or a work order's. */
export type Stamper = (object: KubeObject, placement: StampPlacement) => KubeObject;

/**
 * Where a namespaced object goes: its own, else the watched one, else its generator's namespace
 * when the grant confines it, else default. The reconciler and the preview both place by this.
 */
export function targetNamespace(
  doc: KubeObject,
  resource: ApiResource,
  where: { watchNamespace: string | undefined; scope: PlacementScope },
): string | undefined {
  if (!resource.namespaced) return undefined;
  return doc.metadata.namespace ?? where.watchNamespace ?? defaultNamespaceFor(where.scope) ?? 'default';
}

/** targetNamespace, refused outside the watched one. */
function namespaceOf(ctx: PlanContext, doc: KubeObject, resource: ApiResource): string | undefined {
  const namespace = targetNamespace(doc, resource, ctx);
  if (namespace !== undefined && ctx.watchNamespace && namespace !== ctx.watchNamespace) {
    throw new Error(`${describe(doc)} is in namespace ${namespace}, but this agent only manages namespace ${ctx.watchNamespace}`);
  }
  return namespace;
}

/** The object's type and namespace, refused when the cluster has no such type or the scope does not let it go there. */
async function placeOne(ctx: PlanContext, doc: KubeObject): Promise<{ resource: ApiResource; namespace: string | undefined }> {
  const resource = await ctx.discovery.resolve(doc.apiVersion, doc.kind);
  if (!resource)
    throw new Error(`Unable to resolve ${doc.apiVersion}, Kind=${doc.kind} for ${describe(doc)}: no such resource type in the cluster`);
  const namespace = namespaceOf(ctx, doc, resource);
  const { apiVersion, kind } = doc;
  const refusal = placementRefusal(ctx.scope, { apiVersion, kind, name: doc.metadata.name, namespace, namespaced: resource.namespaced });
  if (refusal) throw new Error(`${describe({ kind, metadata: { name: doc.metadata.name, namespace } })} ${refusal}`);
  return { resource, namespace };
}

/** Whether the stack took the object over: now (its claim), or on an earlier pass (our mark on it). */
const isAdopted = (claim: Claim | undefined, live: ObjectMeta | undefined) =>
  claim?.verdict === 'adopt' || (claim?.verdict === 'ours' && live?.annotations?.[ADOPTED_ANNOTATION] === 'true');

async function planOne(ctx: PlanContext, doc: KubeObject, stamper: Stamper, claim: ClaimRule | undefined): Promise<PlannedObject> {
  const { resource, namespace } = await placeOne(ctx, doc);
  const key = objectKey(resource, namespace, doc.metadata.name);
  // Not in our inventory: new, or someone else's object of the same name (its metadata says whose).
  const live = ctx.inventory.byKey.get(key)?.meta ?? (await ctx.objects.getMetadata(resource, namespace, doc.metadata.name));
  const verdict = claim?.(doc, live);
  if (verdict?.verdict === 'refused') throw new Error(`${describe(doc)} ${verdict.reason}`);
  const owned = ownedAfterApply(live, ctx.agentId, verdict);
  return {
    object: stamper(doc, { owned, namespace, adopted: isAdopted(verdict, live) }),
    resource,
    namespace,
    key,
    existed: live !== undefined,
    owned,
    previousVersion: live?.resourceVersion,
  };
}

/** A deployment object's stamp (stack, owner, checksum, object id). */
export const stackStamper =
  (stampCtx: StampContext): Stamper =>
  (object, placement) =>
    stamp(object, stampCtx, placement);

/**
 * Plans every document; all resolution problems (and ownership refusals, when a claim rule is
 * given) are reported together, before anything of the phase is written.
 */
export async function planObjects(ctx: PlanContext, docs: KubeObject[], stamper: Stamper, claim?: ClaimRule): Promise<PlannedObject[]> {
  const results = await mapLimit(docs, ctx.concurrency, (doc) => planOne(ctx, doc, stamper, claim));
  const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (rejected.length) throw ReconcileError.from(rejected, (err) => (err as Error).message);
  return results.map((r) => (r as PromiseFulfilledResult<PlannedObject>).value);
}
