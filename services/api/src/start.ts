import { randomUUID } from 'node:crypto';
import { connectBus, connectNats, ensureStreams, natsInboxPrefix } from '@brokkr/bus';
import { loadWebhookKey } from '@brokkr/crypto';
import { createDb, migrateLatest, type Db } from '@brokkr/db';
import { pgCheck, startHealthServer, type HealthServer } from '@brokkr/health';
import type { Logger } from '@brokkr/logger';
import { startMemoryRelease } from '@brokkr/runtime';
import { startTelemetry } from '@brokkr/telemetry';
import { bootstrap } from './bootstrap/first-start.ts';
import { createContext } from './create-context.ts';
import { startQueuedEngine, type QueuedEngine } from './rendering/queued-engine.ts';
import { createApp } from './app.ts';
import { closeServer, listen } from './http/listen.ts';
import { createUpgradeRouter } from './http/upgrade-router.ts';
import { allUpgradeRoutes } from './upgrade-routes.ts';
import { createApiMetrics, type ApiMetrics } from './metrics/api-metrics.ts';
import { allRoutes } from './resources/index.ts';
import { Replicas } from './delivery/replicas.ts';
import { requireWebhookKey } from './resources/webhooks/key-guard.ts';
import type { ApiSettings } from './settings/api-settings.ts';

export interface RunningApi {
  url: string;
  /** Graceful stop: no new requests, in-flight ones finish, NATS drained, pool closed. */
  stop(): Promise<void>;
}

// Requests in flight get this long; the rest of the shutdown (outbox, NATS drain, pool, telemetry)
// must fit in what is left of the runtime's 25 s deadline.
const SERVER_DRAIN_MS = 20_000;
const TELEMETRY_FLUSH_MS = 2000;
const DEFAULT_PAK_WARNING_INTERVAL_MS = 60 * 60 * 1000;

/** Migrates, connects Postgres and NATS, runs the first-start bootstrap and listens. */
export async function startApi(settings: ApiSettings, logger: Logger): Promise<RunningApi> {
  const telemetry = startTelemetry({ ...settings.telemetry, logger });
  // The SDK is imported only when telemetry is on: running (or failed) before the api serves.
  await telemetry.ready;
  const db = await openDatabase(settings, logger);
  const webhookKey = loadWebhookKey(settings.webhooks.encryptionKey);
  await requireWebhookKey(db.pool, webhookKey, logger);
  // Replies under the api's own inbox prefix: its NATS user may subscribe to no other (docs/nats-subjects.md §7).
  const nats = { ...settings.nats, inboxPrefix: natsInboxPrefix('api'), logger };
  const bus = await connectBus({ ...nats, name: 'brokkr-api' });
  await ensureStreams(bus.jsm);
  const noticeBus = await connectNats({ ...nats, name: 'brokkr-api-notices' });

  const engine = queueRenders(settings, db, logger);
  const shutdown = new AbortController();
  const metrics = createApiMetrics();
  const origin = randomUUID();
  const replicas = new Replicas(origin);
  const ctx = createContext({
    settings,
    logger,
    db,
    bus,
    metrics,
    webhookKey,
    noticeConnection: noticeBus.nc,
    replicas,
    origin,
    engine,
    shutdownSignal: shutdown.signal,
  });
  // The notice subscription (createContext) and this replica's presence reach nats-server before
  // anything is served: a notice published after a first read still arrives, and every other
  // replica waits for this one before answering a write (delivery/replicas.ts).
  await replicas.start(bus.nc, logger);
  const boot = await bootstrap({ db, logger, configuredHash: settings.adminPak.configuredHash, pakFile: settings.adminPak.file });
  ctx.metrics.defaultAdminPakInUse.set(boot.defaultAdminHashInUse ? 1 : 0);
  const warnTimer = boot.defaultAdminHashInUse ? warnOfDefaultPak(logger) : undefined;

  const webSockets = createUpgradeRouter(ctx, allUpgradeRoutes);
  const api = createApp(ctx, { routes: allRoutes, webSocketPaths: webSockets.plainRequests });
  const { host, port: configuredPort } = settings.http;
  const server = await listen(api.app, host, configuredPort);
  webSockets.attach(server);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : configuredPort;
  const url = `http://${host}:${port}`;
  logger.info({ url }, `api listening on ${url}`);
  // Agent names are on this port only: the chart's Service and Ingress never route to it (docs/security.md).
  const metricsServer: HealthServer | undefined = settings.http.metricsPort
    ? await startHealthServer({
        port: settings.http.metricsPort,
        host,
        registry: api.allMetrics,
        checks: { database: pgCheck(db.pool) },
        logger,
      })
    : undefined;
  const memory = startMemoryReleaseFor(settings, ctx.metrics, logger);
  ctx.rendering.sweeper.start();

  return {
    url,
    async stop() {
      clearInterval(warnTimer);
      memory.stop();
      shutdown.abort();
      // Upgraded sockets are no longer requests: close them, or the server would wait for them.
      webSockets.close();
      await closeServer(server, SERVER_DRAIN_MS);
      await metricsServer?.close();
      await ctx.rendering.sweeper.stop();
      await engine.close();
      await ctx.outbox.drain();
      api.close();
      ctx.auth.close();
      await ctx.yaml.close();
      replicas.stop();
      await noticeBus.close();
      await bus.close();
      await db.close();
      // A collector that is down must not hold the exit for the exporter's full retry budget.
      await Promise.race([telemetry.shutdown(), new Promise((r) => setTimeout(r, TELEMETRY_FLUSH_MS).unref())]);
      logger.info('api stopped');
    },
  };
}

/** Says, every hour, that the admin PAK is Brokkr's public default. */
function warnOfDefaultPak(logger: Logger): NodeJS.Timeout {
  return setInterval(
    () => logger.warn("SECURITY WARNING: the admin PAK is still Brokkr's public default"),
    DEFAULT_PAK_WARNING_INTERVAL_MS,
  ).unref();
}

/** The database, migrated to this version's schema. */
async function openDatabase(settings: ApiSettings, logger: Logger) {
  const dbSettings = { url: settings.database.url, schema: settings.database.schema };
  const applied = await migrateLatest(dbSettings);
  if (applied.length > 0) logger.info({ applied }, 'database migrated');
  return createDb({ ...dbSettings, poolSize: settings.database.poolSize, applicationName: 'brokkr-api' });
}

/** Charts and overlays are rendered by the renderer service: this replica queues them and waits (docs/adr/0046). */
function queueRenders(settings: ApiSettings, db: Db, logger: Logger): QueuedEngine {
  return startQueuedEngine({
    db: db.pool,
    databaseUrl: settings.database.url,
    waitMs: settings.rendering.waitSeconds * 1000,
    logger: logger.child({ component: 'render-queue' }),
  });
}

/** Gives pooled memory back to the OS once a load peak is over (ADR 0030). */
function startMemoryReleaseFor(settings: ApiSettings, metrics: ApiMetrics, logger: Logger): ReturnType<typeof startMemoryRelease> {
  return startMemoryRelease({
    thresholdBytes: settings.memoryReleaseAboveBytes,
    onRelease: ({ rssBeforeBytes, rssAfterBytes, pauseMs }) => {
      metrics.memoryReleases.inc();
      const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
      logger.info(
        { rssBeforeMiB: mib(rssBeforeBytes), rssAfterMiB: mib(rssAfterBytes), pauseMs: Math.round(pauseMs) },
        'quiet after a load peak: gave pooled memory back to the OS',
      );
    },
    onUnavailable: (reason) => logger.warn({ reason }, 'memory release after load peaks is off'),
  });
}
