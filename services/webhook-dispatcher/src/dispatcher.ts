import { SUBJECTS, publishCore, type Bus } from '@brokkr/bus';
import { loadWebhookKey, requireKeyWhenSubscriptionsExist } from '@brokkr/crypto';
import type { WebhookDispatcherConfig } from '@brokkr/config';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import { createDeliveryFailedAuditor } from './audit.ts';
import { EndpointCapacity } from './delivery/capacity.ts';
import { startDeliveryLoop } from './delivery/delivery-loop.ts';
import { createWebhookHttpClient } from './delivery/http-client.ts';
import { startEventIntake } from './intake/event-intake.ts';
import { createDispatcherMetrics } from './metrics.ts';
import { createSubscriptionCache } from './subscriptions/cache.ts';
import { subscriptionsExist } from './sql/subscriptions.ts';

export type DispatcherSettings = Pick<
  WebhookDispatcherConfig,
  | 'BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY'
  | 'BROKKR__BROKER__WEBHOOK_DELIVERY_BATCH_SIZE'
  | 'BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS'
  | 'BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS'
  | 'BROKKR__BROKER__WEBHOOK_CONCURRENCY'
  | 'BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY'
  | 'BROKKR__BROKER__WEBHOOK_LEASE_SECONDS'
  | 'BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS'
>;

export interface DispatcherDeps {
  config: DispatcherSettings;
  logger: Logger;
  db: Db;
  bus: Bus;
  metrics: Registry;
  /** How long stop() lets in-flight POSTs run before aborting them and releasing their rows. */
  stopGraceMs?: number;
}

export interface Dispatcher {
  /** Stop consuming and claiming, finish (or after a grace period abort and release) in-flight POSTs. */
  stop(): Promise<void>;
}

/** How close together two `brokkr.notify.deliveries` hints from one replica may be. */
const NOTIFY_MIN_GAP_MS = 20;

export async function startDispatcher(deps: DispatcherDeps): Promise<Dispatcher> {
  const { config, logger, db, bus } = deps;
  const key = loadWebhookKey(config.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY);
  await requireKeyWhenSubscriptionsExist(key, () => subscriptionsExist(db), logger);
  const metrics = createDispatcherMetrics(deps.metrics);
  const client = createWebhookHttpClient({
    allowPrivateNetworks: config.BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    connectionsPerOrigin: config.BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY,
  });
  if (config.BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS) logger.warn('SSRF guard off: webhook targets on private networks are allowed');
  const loop = startDeliveryLoop({
    db: db.pool,
    key,
    client,
    logger,
    metrics,
    capacity: new EndpointCapacity(config.BROKKR__BROKER__WEBHOOK_CONCURRENCY, config.BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY),
    auditDead: createDeliveryFailedAuditor({ js: bus.js, db, logger, fallbacks: metrics.auditFallbacks }),
    batchSize: config.BROKKR__BROKER__WEBHOOK_DELIVERY_BATCH_SIZE,
    leaseFloorSeconds: config.BROKKR__BROKER__WEBHOOK_LEASE_SECONDS,
    intervalMs: config.BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS * 1000,
    retry: { maxBackoffSeconds: config.BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS },
  });
  // Any replica's intake (or an admin redelivery through the api) wakes every replica's loop.
  const notifySub = bus.nc.subscribe(SUBJECTS.notifyDeliveries, { callback: () => loop.wake() });
  let lastNotify = 0;
  const cache = createSubscriptionCache({ db, nc: bus.nc, logger });
  const intake = await startEventIntake({
    bus,
    db: db.pool,
    cache,
    logger,
    metrics,
    onNewDeliveries() {
      loop.wake();
      const now = Date.now();
      if (now - lastNotify < NOTIFY_MIN_GAP_MS) return;
      lastNotify = now;
      publishCore(bus.nc, SUBJECTS.notifyDeliveries, {});
    },
  });
  logger.info({ fingerprint: key.fingerprint }, 'webhook dispatcher consuming events');

  return {
    async stop() {
      await intake.stop();
      cache.close();
      notifySub.unsubscribe();
      await loop.stop(deps.stopGraceMs);
      await client.close();
    },
  };
}
