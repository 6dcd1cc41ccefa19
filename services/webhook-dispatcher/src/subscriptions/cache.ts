import { SUBJECTS, type NatsConnection } from '@brokkr/bus';
import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { loadEnabledSubscriptions } from '../sql/subscriptions.ts';
import { anyPatternMatches, compileFilter, type EventFilter } from './matching.ts';

export interface CachedSubscription {
  id: string;
  eventTypes: readonly string[];
  admits: EventFilter;
  targetLabels: string[] | null;
}

export interface SubscriptionCache {
  /** The enabled subscriptions that want this event. */
  match(eventType: string, data: Record<string, unknown>): Promise<CachedSubscription[]>;
  invalidate(): void;
  close(): void;
}

export interface SubscriptionCacheOptions {
  db: Queryable;
  nc: NatsConnection;
  logger: Logger;
  /** Reload at least this often even without a hint (a hint is lost while NATS reconnects). */
  maxAgeMs?: number;
}

/**
 * Matching runs for every event, so the enabled subscriptions are held in memory. Every api write
 * to a subscription publishes `brokkr.cache.invalidate.webhooks`; the next event reloads. The
 * generation counter keeps a reload that started before an invalidation from being taken as fresh.
 */
export function createSubscriptionCache(options: SubscriptionCacheOptions): SubscriptionCache {
  const maxAgeMs = options.maxAgeMs ?? 10_000;
  let generation = 0;
  let loaded: { generation: number; at: number; subs: CachedSubscription[] } | undefined;
  let loading: Promise<void> | undefined;

  async function reload(): Promise<void> {
    const startedAt = generation;
    const rows = await loadEnabledSubscriptions(options.db);
    const subs = rows.map((r) => ({
      id: r.id,
      eventTypes: r.event_types,
      admits: compileFilter(r.filters),
      targetLabels: r.target_labels,
    }));
    loaded = { generation: startedAt, at: Date.now(), subs };
  }

  async function current(): Promise<CachedSubscription[]> {
    for (;;) {
      if (loaded && loaded.generation === generation && Date.now() - loaded.at < maxAgeMs) return loaded.subs;
      // Concurrent callers share one reload; if it was invalidated meanwhile, go round again.
      loading ??= reload().finally(() => (loading = undefined));
      await loading;
    }
  }

  const sub = options.nc.subscribe(SUBJECTS.cacheInvalidate('webhooks'), {
    callback: () => {
      generation++;
    },
  });
  options.logger.debug('subscription cache listening for invalidations');

  return {
    async match(eventType, data) {
      const subs = await current();
      return subs.filter((s) => anyPatternMatches(s.eventTypes, eventType) && s.admits(data));
    },
    invalidate() {
      generation++;
    },
    close() {
      sub.unsubscribe();
    },
  };
}
