import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import { pakInvalidationSchema, type PakInvalidation } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { IncomingMessage } from 'node:http';
import type { ClientAddress } from './client-info.ts';
import { resolvePakHash, resolvePakHashes } from './sql/resolve-pak.ts';
import type { Identity } from './identity.ts';
import { PakCache } from './pak-cache.ts';
import { SharedLookups } from './shared-lookups.ts';
import { unknownPakThrottled, UnknownPaks, type UnknownPakLimits } from './unknown-paks.ts';

const INVALIDATION_SUBJECT = SUBJECTS.cacheInvalidate('pak');
const FLUSH_TIMEOUT_MS = 1000;

export interface Authenticator {
  /** The identity of a PAK hash, from the cache or the database; undefined = unknown PAK. */
  resolve(hash: string): Promise<Identity | undefined>;
  /**
   * `resolve` for a request's credential: a hash that matched nobody moments ago is not looked up
   * again, and an address that presented too many unknown PAKs has its lookups share statements
   * with every other such lookup on this replica, and gets 429 `too_many_unknown_paks` for each
   * PAK that turned out unknown (unknown-paks.ts). A valid PAK is never refused.
   */
  resolveRequest(hash: string, req: IncomingMessage): Promise<Identity | undefined>;
  /**
   * Forgets hashes on this replica at once and on every other replica through NATS. Call it
   * after the transaction that rotated or deleted the credential, or changed whether it
   * authenticates, committed (it also drops the memory of unknown hashes).
   */
  invalidate(hashes: readonly string[]): Promise<void>;
  /**
   * Called after a hash (or, with `undefined`, every hash) was dropped on this replica, whichever
   * replica rotated or deleted the credential: open WebSockets re-check their PAK here.
   */
  onInvalidate(listener: (hash: string | undefined) => void): () => void;
  /** Stops listening for invalidations. */
  close(): void;
}

export interface AuthenticatorOptions {
  db: Queryable;
  nc: NatsConnection;
  ttlSeconds: number;
  logger: Logger;
  /** Who sent a request (the budget of unknown-PAK lookups is per address). */
  clientAddress: ClientAddress;
  unknownPaks: UnknownPakLimits;
}

function applyInvalidation(cache: PakCache, payload: unknown): string | undefined | false {
  const parsed = pakInvalidationSchema.safeParse(payload);
  if (!parsed.success) return false;
  if ('all' in parsed.data) {
    cache.clear();
    return undefined;
  }
  cache.invalidate(parsed.data.hash);
  return parsed.data.hash;
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { db, nc, logger } = options;
  const cache = new PakCache(options.ttlSeconds * 1000);
  const unknown = new UnknownPaks(options.unknownPaks);
  const listeners = new Set<(hash: string | undefined) => void>();
  const announce = (hash: string | undefined): void => {
    unknown.forget();
    for (const listener of listeners) listener(hash);
  };

  async function resolve(hash: string): Promise<Identity | undefined> {
    const cached = cache.get(hash);
    if (cached) return cached;
    const generation = cache.generation;
    const identity = await resolvePakHash(db, hash);
    if (identity) cache.set(hash, identity, generation);
    return identity;
  }
  // Callbacks run synchronously on arrival, ahead of any request the event loop handles next.
  const sub = nc.subscribe(INVALIDATION_SUBJECT, {
    callback: (err, msg) => {
      if (err) return logger.warn({ err }, 'pak invalidation subscription error');
      try {
        const dropped = applyInvalidation(cache, msg.json());
        if (dropped !== false) announce(dropped);
      } catch (parseErr) {
        logger.warn({ err: parseErr }, 'ignoring malformed pak invalidation');
      }
    },
  });

  // Lookups for addresses past their budget: one statement at a time for all of them (shared-lookups.ts).
  const overBudget = new SharedLookups(async (hashes: string[]) => {
    const generation = cache.generation;
    const found = await resolvePakHashes(db, hashes);
    for (const [hash, identity] of found) cache.set(hash, identity, generation);
    return found;
  });

  return {
    resolve,
    async resolveRequest(hash, req) {
      const cached = cache.get(hash);
      if (cached) return cached;
      if (unknown.isKnownUnknown(hash)) return undefined;
      const origin = options.clientAddress(req) ?? '';
      if (unknown.mayLookUp(origin)) {
        const identity = await resolve(hash);
        if (!identity) unknown.missed(hash, origin);
        return identity;
      }
      // Still looked up, so a valid PAK that is not cached is answered (behind an ingress every
      // client shares one address), but batched with every other over-budget lookup: a flood of
      // random PAKs holds one connection and one statement at a time, not the pool.
      const identity = await overBudget.get(hash);
      if (identity) return identity;
      unknown.missed(hash, origin);
      throw unknownPakThrottled();
    },
    async invalidate(hashes) {
      const live = hashes.filter((h) => h !== '');
      for (const hash of live) {
        cache.invalidate(hash);
        publishCore(nc, INVALIDATION_SUBJECT, { hash } satisfies PakInvalidation);
        announce(hash);
      }
      if (live.length === 0 || nc.isClosed()) return;
      // Make sure the server has the message before the response goes out, so a client's next
      // request to another replica finds the entry already dropped.
      await Promise.race([nc.flush(), new Promise((r) => setTimeout(r, FLUSH_TIMEOUT_MS).unref())]).catch((err: unknown) =>
        logger.warn({ err }, 'pak invalidation flush failed'),
      );
    },
    onInvalidate(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      listeners.clear();
      sub.unsubscribe();
    },
  };
}
