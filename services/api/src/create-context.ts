import type { Bus, NatsConnection } from '@brokkr/bus';
import type { WebhookKey } from '@brokkr/crypto';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { createAuditor } from './audit/auditor.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import type { ApiContext } from './context.ts';
import { clientAddress } from './auth/client-info.ts';
import { AgentSockets } from './delivery/agent-sockets/registry.ts';
import { createLiveMetrics } from './delivery/agent-sockets/metrics.ts';
import { Delivery } from './delivery/pipeline.ts';
import { createPublishWindow } from './delivery/publish-window.ts';
import type { Replicas } from './delivery/replicas.ts';
import { createNotifyAgents, type NotifyAgents } from './delivery/send.ts';
import { startTargetStateCache } from './delivery/target-state/process-cache.ts';
import { Waiters, waitersGauge } from './delivery/waiters.ts';
import { createOutboxPublisher } from './events/outbox-publisher.ts';
import { onTrustMetadataChanged } from './events/trust-metadata-changes.ts';
import { createTransact } from './events/transact.ts';
import { createFeeds } from './feeds/feeds.ts';
import { forgetRelayedTrustMetadata } from './resources/signatures/relay-cache.ts';
import { NO_ENGINE, type Engine } from './rendering/render.ts';
import { createRendering, type Rendering } from './rendering/rendering.ts';
import { StreamQuota } from './limits/stream-quota.ts';
import type { ApiMetrics } from './metrics/api-metrics.ts';
import type { ApiSettings } from './settings/api-settings.ts';
import { createConfigReloader } from './settings/config-reload.ts';
import { createYamlValidator } from './yaml/index.ts';

export interface ContextDeps {
  settings: ApiSettings;
  logger: Logger;
  db: Db;
  bus: Bus;
  metrics: ApiMetrics;
  webhookKey: WebhookKey;
  /** The connection notices are sent on, apart from the main one (delivery/send.ts). */
  noticeConnection: NatsConnection;
  /** The other api replicas this one hears from (delivery/replicas.ts); started by start.ts. */
  replicas: Replicas;
  /** Marks this replica's own notices and its presence. */
  origin: string;
  /** The chart and overlay engine (start.ts: the renderer service's queue); none: charts and overlays are refused. */
  engine?: Engine | undefined;
  shutdownSignal: AbortSignal;
}

/** The stages of the delivery (delivery/pipeline.ts), the feeds its fourth stage tells, and its sender. */
function createDeliveryParts(deps: ContextDeps) {
  const { db, bus, metrics, logger } = deps;
  const targetStates = startTargetStateCache({ db: db.pool, nc: bus.nc, registry: metrics.registry, logger });
  const waiters = new Waiters();
  waitersGauge(metrics.registry, waiters);
  const agentSockets = new AgentSockets(createLiveMetrics(metrics.registry), db.pool, logger, {
    step: (agentId, signed) => targetStates.stepFull(agentId, signed),
    rowJson: (row, carried) => targetStates.bytes.servedRowJson(row, carried),
  });
  const feeds = createFeeds({
    db: db.pool,
    nc: bus.nc,
    logger,
    registry: metrics.registry,
    agentRegistry: metrics.agentRegistry,
    agentSockets,
    signal: deps.shutdownSignal,
  });
  // The fixed order every notice follows on this replica: answers, waiters, sockets, views.
  const delivery = new Delivery(deps.origin, { answers: targetStates, waiters, sockets: agentSockets, views: feeds.views });
  delivery.listen(bus.nc, logger);
  // Published trust metadata: read again here, and the agents that check signatures told to read it.
  onTrustMetadataChanged(bus.nc, logger, () => {
    forgetRelayedTrustMetadata(db.pool);
    agentSockets.trustMetadataChanged();
  });
  return { delivery, targetStates, waiters, agentSockets, feeds };
}

const RENDER_SWEEP_MS = 10_000;

export function createContext(deps: ContextDeps): ApiContext {
  const { settings, logger, db, bus, metrics } = deps;
  const window = createPublishWindow();
  const outbox = createOutboxPublisher({ js: bus.js, db: db.pool, logger, window });
  const { delivery, ...delivered } = createDeliveryParts(deps);
  const sent = createNotifyAgents({ nc: deps.noticeConnection, delivery, replicas: deps.replicas, logger, window });
  // A wake-up without a reason (a target, a label, a registration changed) may change which
  // objects an agent is rendered: the render sweeper looks soon.
  const notifyAgents: NotifyAgents = (ids, reason) => {
    if (!reason) rendering.sweeper.soon();
    return sent(ids, reason);
  };
  const transact = createTransact({ db, outbox, notifyAgents });
  const rendering: Rendering = createRendering({
    pool: db.pool,
    engine: deps.engine ?? NO_ENGINE,
    counts: {
      rendered: (outcome, n) => metrics.renders.inc({ outcome }, n),
      reused: (n) => metrics.renderReuses.inc(n),
    },
    transact,
    logger,
    lockName: `brokkr.api.render-sweep:${settings.database.schema ?? 'public'}`,
    sweepIntervalMs: RENDER_SWEEP_MS,
  });
  const addressOf = clientAddress(settings.http.proxyTrust);
  return {
    settings,
    logger,
    db,
    bus,
    metrics,
    clientAddress: addressOf,
    auth: createAuthenticator({
      db: db.pool,
      nc: bus.nc,
      ttlSeconds: settings.authCacheTtlSeconds,
      logger,
      clientAddress: addressOf,
      unknownPaks: settings.limits.unknownPak,
    }),
    audit: createAuditor({ js: bus.js, db: db.pool, logger, fallbackWrites: metrics.auditFallbackWrites }),
    transact,
    notifyAgents,
    outbox,
    shutdownSignal: deps.shutdownSignal,
    yaml: createYamlValidator(),
    webhookKey: deps.webhookKey,
    rendering,
    ...delivered,
    streams: new StreamQuota(settings.limits.streamsPerPak),
    configReloader: createConfigReloader(),
  };
}
