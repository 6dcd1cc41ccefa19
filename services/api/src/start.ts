import { connectBus, ensureStreams } from '@brokkr/bus';
import type { ApiConfig } from '@brokkr/config';
import { loadWebhookKey } from '@brokkr/crypto';
import { createDb, migrateLatest } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { startTelemetry } from '@brokkr/telemetry';
import { bootstrap } from './bootstrap/first-start.ts';
import { createContext } from './create-context.ts';
import { createApp } from './http/app.ts';
import { closeServer, listen } from './http/listen.ts';
import { createApiMetrics } from './metrics/api-metrics.ts';
import { allRoutes } from './resources/index.ts';
import { startProcessWakeups } from './resources/targeting/process-wakeups.ts';
import { requireWebhookKey } from './resources/webhooks/key-guard.ts';

export interface RunningApi {
  url: string;
  /** Graceful stop: no new requests, in-flight ones finish, NATS drained, pool closed. */
  stop(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 25_000;
const TELEMETRY_FLUSH_MS = 2000;
const DEFAULT_PAK_WARNING_INTERVAL_MS = 60 * 60 * 1000;

export async function startApi(config: ApiConfig, logger: Logger): Promise<RunningApi> {
  const telemetry = startTelemetry({
    serviceName: config.BROKKR__TELEMETRY__SERVICE_NAME ?? 'brokkr-api',
    enabled: config.BROKKR__TELEMETRY__ENABLED,
    otlpEndpoint: config.BROKKR__TELEMETRY__OTLP_ENDPOINT,
    samplingRate: config.BROKKR__TELEMETRY__SAMPLING_RATE,
    logger,
  });
  const dbSettings = { url: config.BROKKR__DATABASE__URL, schema: config.BROKKR__DATABASE__SCHEMA };
  const applied = await migrateLatest(dbSettings);
  if (applied.length > 0) logger.info({ applied }, 'database migrated');
  const db = createDb({ ...dbSettings, poolSize: config.BROKKR__DATABASE__POOL_SIZE, applicationName: 'brokkr-api' });
  const webhookKey = loadWebhookKey(config.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY);
  await requireWebhookKey(db.pool, webhookKey, logger);
  const bus = await connectBus({ url: config.BROKKR__NATS__URL, name: 'brokkr-api', logger });
  await ensureStreams(bus.jsm);

  const shutdown = new AbortController();
  const metrics = createApiMetrics();
  const wakeups = await startProcessWakeups(bus.nc, metrics.registry, logger);
  const ctx = createContext({ config, logger, db, bus, metrics, webhookKey, wakeups, shutdownSignal: shutdown.signal });
  const boot = await bootstrap({
    db,
    logger,
    configuredHash: config.BROKKR__BROKER__PAK_HASH,
    pakFile: config.BROKKR__BROKER__PAK_FILE,
  });
  ctx.metrics.defaultAdminPakInUse.set(boot.defaultAdminHashInUse ? 1 : 0);
  const warnTimer = boot.defaultAdminHashInUse
    ? setInterval(() => logger.warn("SECURITY WARNING: the admin PAK is still Brokkr's public default"), DEFAULT_PAK_WARNING_INTERVAL_MS).unref()
    : undefined;

  const api = createApp(ctx, { routes: allRoutes });
  const server = await listen(api.app, config.BROKKR__BROKER__HOST, config.BROKKR__BROKER__PORT);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.BROKKR__BROKER__PORT;
  const url = `http://${config.BROKKR__BROKER__HOST}:${port}`;
  logger.info({ url }, `api listening on ${url}`);

  return {
    url,
    async stop() {
      clearInterval(warnTimer);
      shutdown.abort();
      await closeServer(server, SHUTDOWN_GRACE_MS);
      await ctx.outbox.drain();
      api.close();
      ctx.auth.close();
      await ctx.yaml.close();
      await bus.close();
      await db.close();
      // A collector that is down must not hold the exit for the exporter's full retry budget.
      await Promise.race([telemetry.shutdown(), new Promise((r) => setTimeout(r, TELEMETRY_FLUSH_MS).unref())]);
    },
  };
}
