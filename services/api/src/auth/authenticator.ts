import { publishCore, SUBJECTS, type NatsConnection } from '@brokkr/bus';
import { pakInvalidationSchema, type PakInvalidation } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { resolvePakHash } from './sql/resolve-pak.ts';
import type { Identity } from './identity.ts';
import { PakCache } from './pak-cache.ts';

const INVALIDATION_SUBJECT = SUBJECTS.cacheInvalidate('pak');
const FLUSH_TIMEOUT_MS = 1000;

export interface Authenticator {
  /** The identity of a PAK hash, from the cache or the database; undefined = unknown PAK. */
  resolve(hash: string): Promise<Identity | undefined>;
  /**
   * Forgets hashes on this replica at once and on every other replica through NATS. Call it
   * after the transaction that rotated or deleted the credential committed.
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

export function createAuthenticator(options: { db: Queryable; nc: NatsConnection; ttlSeconds: number; logger: Logger }): Authenticator {
  const { db, nc, logger } = options;
  const cache = new PakCache(options.ttlSeconds * 1000);
  const listeners = new Set<(hash: string | undefined) => void>();
  const announce = (hash: string | undefined): void => {
    for (const listener of listeners) listener(hash);
  };
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

  return {
    async resolve(hash) {
      const cached = cache.get(hash);
      if (cached) return cached;
      const generation = cache.generation;
      const identity = await resolvePakHash(db, hash);
      if (identity) cache.set(hash, identity, generation);
      return identity;
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
