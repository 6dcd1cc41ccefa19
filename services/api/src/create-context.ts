import type { ApiConfig } from '@brokkr/config';
import type { Bus } from '@brokkr/bus';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { createAuditor } from './audit/auditor.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import type { ApiContext } from './context.ts';
import { createNotifyAgents } from './events/notify.ts';
import { createOutboxPublisher } from './events/outbox-publisher.ts';
import { createTransact } from './events/transact.ts';
import { createApiMetrics, type ApiMetrics } from './metrics/api-metrics.ts';
import { createYamlValidator } from './yaml/index.ts';

export interface ContextDeps {
  config: ApiConfig;
  logger: Logger;
  db: Db;
  bus: Bus;
  metrics?: ApiMetrics;
  shutdownSignal?: AbortSignal;
}

export function createContext(deps: ContextDeps): ApiContext {
  const { config, logger, db, bus } = deps;
  const metrics = deps.metrics ?? createApiMetrics();
  const outbox = createOutboxPublisher({ js: bus.js, db: db.pool, logger });
  const notifyAgents = createNotifyAgents(bus.nc, logger);
  return {
    config,
    logger,
    db,
    bus,
    metrics,
    auth: createAuthenticator({ db: db.pool, nc: bus.nc, ttlSeconds: config.BROKKR__BROKER__AUTH_CACHE_TTL_SECONDS, logger }),
    audit: createAuditor({ js: bus.js, db: db.pool, logger, fallbackWrites: metrics.auditFallbackWrites }),
    transact: createTransact({ db, outbox, notifyAgents }),
    notifyAgents,
    outbox,
    shutdownSignal: deps.shutdownSignal ?? new AbortController().signal,
    yaml: createYamlValidator(),
  };
}
