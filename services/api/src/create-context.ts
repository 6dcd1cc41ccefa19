import type { Bus, NatsConnection } from '@brokkr/bus';
import type { WebhookKey } from '@brokkr/crypto';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { createAuditor } from './audit/auditor.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import type { ApiContext } from './context.ts';
import { clientAddress } from './auth/client-info.ts';
import { createNotifyAgents } from './events/notify.ts';
import { createOutboxPublisher } from './events/outbox-publisher.ts';
import { createPublishWindow } from './events/publish-window.ts';
import { createTransact } from './events/transact.ts';
import { AgentConnections } from './live/agent-channel/registry.ts';
import { StreamQuota } from './limits/stream-quota.ts';
import { createLiveMetrics } from './live/metrics.ts';
import type { ApiMetrics } from './metrics/api-metrics.ts';
import { startTargetStateCache } from './resources/target-state/process-cache.ts';
import type { AgentWakeups } from './events/wakeups.ts';
import { createLiveState } from './live/live-state.ts';
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
  wakeups: AgentWakeups;
  /** The connection wake-ups are sent on, apart from the main one (events/notify.ts). */
  wakeupConnection: NatsConnection;
  shutdownSignal: AbortSignal;
}

export function createContext(deps: ContextDeps): ApiContext {
  const { settings, logger, db, bus, metrics } = deps;
  const window = createPublishWindow();
  const outbox = createOutboxPublisher({ js: bus.js, db: db.pool, logger, window });
  const notifyAgents = createNotifyAgents(deps.wakeupConnection, deps.wakeups, logger, window);
  const targetStates = startTargetStateCache({ db: db.pool, nc: bus.nc, wakeups: deps.wakeups, registry: metrics.registry, logger });
  // The cache hears each wake-up before the agent channel does (registered first), so a step sees it pending.
  const agentConnections = new AgentConnections(createLiveMetrics(metrics.registry), db.pool, logger, (agentId) =>
    targetStates.stepFull(agentId),
  );
  deps.wakeups.onNotice(
    (agentId, notice) => {
      if (agentConnections.get(agentId)) agentConnections.notice(notice());
    },
    { mayLag: true },
  );
  const liveFeeds = createLiveState({
    db: db.pool,
    nc: bus.nc,
    wakeups: deps.wakeups,
    logger,
    registry: metrics.registry,
    agentRegistry: metrics.agentRegistry,
    agentConnections,
    signal: deps.shutdownSignal,
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
    transact: createTransact({ db, outbox, notifyAgents }),
    notifyAgents,
    outbox,
    shutdownSignal: deps.shutdownSignal,
    yaml: createYamlValidator(),
    webhookKey: deps.webhookKey,
    wakeups: deps.wakeups,
    targetStates,
    agentConnections,
    liveFeeds,
    streams: new StreamQuota(settings.limits.streamsPerPak),
    configReloader: createConfigReloader(),
  };
}
