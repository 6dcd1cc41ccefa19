import type { Queryable } from '@brokkr/db';
import type { AgentSignatures, TrustMetadata } from '@brokkr/contracts';
import { signaturesFor, trustMetadata } from './sql/queries.ts';

/**
 * What the hub relays to agents that check signatures, kept for a moment by each api process. A new
 * deployment object reaches every agent of its stack at once, and each then asks for the trust
 * metadata and for the object's signature in the same second: 10,000 agents made 20,000 reads of
 * the same rows, 10–19 s of PostgreSQL CPU per change (docs/perf/2026-11-28-signature-verification.md).
 * Now the first request reads and the others share its answer. A signature or trust document stored
 * through this process clears what is kept at once; one stored through another replica is relayed
 * after RELAY_CACHE_MS at most. Those agents do not trust the hub, so a stale answer can only delay
 * them: an agent refusing an object asks again at its next refresh.
 */
const RELAY_CACHE_MS = 2000;
/** More kept objects than this: all forgotten (a burst of distinct objects, not the common case). */
const MAX_OBJECTS = 20_000;

type Signature = AgentSignatures['deployment_objects'][number]['signature'];

interface Kept<T> {
  at: number;
  value: Promise<T>;
}

interface RelayCache {
  objects: Map<string, Kept<Signature | undefined>>;
  metadata: Kept<TrustMetadata> | undefined;
}

/** One per database (tests run several hubs in one process). */
const caches = new WeakMap<Queryable, RelayCache>();

function cacheOf(db: Queryable): RelayCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = { objects: new Map(), metadata: undefined }));
  return cache;
}

const fresh = <T>(kept: Kept<T> | undefined, now: number): kept is Kept<T> => !!kept && now - kept.at < RELAY_CACHE_MS;

/** The signatures of these deployment objects (kept ones, the rest read in one query) and of these work orders (read). */
export async function relayedSignatures(db: Queryable, objectIds: string[], workOrderIds: string[]): Promise<AgentSignatures> {
  const cache = cacheOf(db);
  const now = Date.now();
  const missing = objectIds.filter((id) => !fresh(cache.objects.get(id), now));
  const read = missing.length || workOrderIds.length ? signaturesFor(db, missing, workOrderIds) : undefined;
  if (read && missing.length) {
    if (cache.objects.size + missing.length > MAX_OBJECTS) cache.objects.clear();
    const found = read.then((r) => new Map(r.deployment_objects.map((o) => [o.deployment_object_id, o.signature])));
    for (const id of missing) cache.objects.set(id, { at: now, value: found.then((m) => m.get(id)) });
    // A failed read is not kept: the next request reads again.
    found.catch(() => {
      for (const id of missing) cache.objects.delete(id);
    });
  }
  const workOrders = read ? (await read).work_orders : [];
  const signatures = await Promise.all(objectIds.map(async (id) => [id, await cache.objects.get(id)?.value] as const));
  return {
    deployment_objects: signatures.flatMap(([id, signature]) => (signature === undefined ? [] : [{ deployment_object_id: id, signature }])),
    work_orders: workOrders,
  };
}

export function relayedTrustMetadata(db: Queryable): Promise<TrustMetadata> {
  const cache = cacheOf(db);
  const now = Date.now();
  if (fresh(cache.metadata, now)) return cache.metadata.value;
  const value = trustMetadata(db);
  cache.metadata = { at: now, value };
  value.catch(() => {
    if (cache.metadata?.value === value) cache.metadata = undefined;
  });
  return value;
}

/** After a signature is stored through this process: the next request reads it. */
export function forgetRelayedSignatures(db: Queryable): void {
  cacheOf(db).objects.clear();
}

/** After a trust document is published through this process. */
export function forgetRelayedTrustMetadata(db: Queryable): void {
  cacheOf(db).metadata = undefined;
}
