import { randomUUID } from 'node:crypto';
import type { RendererConfig } from '@brokkr/config';
import { createDb, ensureSchema, type Db } from '@brokkr/db';
import { ConfigError } from '@brokkr/errors';
import { pgCheck, startHealthServer, type ReadinessCheck } from '@brokkr/health';
import type { Logger } from '@brokkr/logger';
import { createRenderer, type Renderer } from '@brokkr/render';
import {
  ALIVE_SECONDS,
  RENDER_JOBS_CHANNEL,
  leaseSeconds,
  listenChannel,
  releaseRenderClaims,
  unregisterRenderer,
} from '@brokkr/render-jobs';
import type { RunningWork } from '@brokkr/runtime';
import { createMetricsRegistry, startTelemetry } from '@brokkr/telemetry';
import { createRendererMetrics } from './metrics.ts';
import { startTicks, type Ticks } from './ticks.ts';
import { RenderWorker } from './worker.ts';

/** Renders at work get this long to finish on SIGTERM; the rest are killed and their jobs released. */
const STOP_GRACE_MS = 15_000;

/** brokkr-render behind the sandbox, with this replica's limits; a binary that cannot run is the operator's to fix. */
async function openRenderer(config: RendererConfig, logger: Logger): Promise<Renderer> {
  const timeoutSeconds = config.BROKKR__RENDERER__TIMEOUT_SECONDS;
  const concurrency = config.BROKKR__RENDERER__CONCURRENCY;
  try {
    return await createRenderer({
      binary: config.BROKKR__RENDERER__BINARY,
      concurrency,
      // Jobs are claimed only for free slots: nothing waits in the process's own queue.
      maxQueued: concurrency,
      maxQueuedPerTenant: concurrency,
      limits: {
        timeoutMs: timeoutSeconds * 1000,
        cpuSeconds: timeoutSeconds,
        outputBytes: config.BROKKR__RENDERER__OUTPUT_MAX_MIB * 1024 * 1024,
        memoryBytes: config.BROKKR__RENDERER__MEMORY_MIB * 1024 * 1024,
      },
      log: (line) => logger.info(line),
    });
  } catch (err) {
    throw new ConfigError(`BROKKR__RENDERER__BINARY: ${config.BROKKR__RENDERER__BINARY} cannot be run: ${(err as Error).message}`);
  }
}

function openDatabase(config: RendererConfig): Db {
  return createDb({
    url: config.BROKKR__DATABASE__URL,
    schema: config.BROKKR__DATABASE__SCHEMA,
    poolSize: config.BROKKR__DATABASE__POOL_SIZE,
    applicationName: 'brokkr-renderer',
  });
}

/** Ready while it hears wake-ups and the registry has it (the api sends it work only then). */
function queueCheck(listening: () => boolean, ticks: Ticks): ReadinessCheck {
  return async () => {
    if (!listening()) throw new Error('not listening for render jobs');
    if (Date.now() - ticks.lastHeartbeat > ALIVE_SECONDS * 1000) throw new Error('not registered as a live renderer');
  };
}

/**
 * The renderer service: the sandboxed renderer, the worker that claims jobs for its free slots, the
 * LISTEN that wakes it, the heartbeat that registers it, and /healthz /readyz /metrics. No NATS:
 * PostgreSQL is all it talks to (docs/adr/0046).
 */
export async function startRendererService(config: RendererConfig, logger: Logger): Promise<RunningWork> {
  const telemetry = startTelemetry({
    serviceName: 'brokkr-renderer',
    enabled: config.BROKKR__TELEMETRY__ENABLED,
    otlpEndpoint: config.BROKKR__TELEMETRY__OTLP_ENDPOINT,
    samplingRate: config.BROKKR__TELEMETRY__SAMPLING_RATE,
  });
  await telemetry.ready;
  const renderer = await openRenderer(config, logger);
  const db = openDatabase(config);
  await ensureSchema(db);
  const registry = createMetricsRegistry({ service: 'renderer' });
  const metrics = createRendererMetrics(registry);
  const id = randomUUID();
  const concurrency = config.BROKKR__RENDERER__CONCURRENCY;
  const worker = new RenderWorker(
    { db: db.pool, renderer, metrics, logger },
    { id, rendererVersion: renderer.version, concurrency, leaseSeconds: leaseSeconds(config.BROKKR__RENDERER__TIMEOUT_SECONDS) },
  );
  const listener = listenChannel({
    url: config.BROKKR__DATABASE__URL,
    channel: RENDER_JOBS_CHANNEL,
    applicationName: 'brokkr-renderer-wake-ups',
    // The payload is the version the job waits for: another version's job is not ours to claim.
    onNotify: (version) => (version === renderer.version ? worker.wake() : undefined),
    onListening: () => worker.wake(),
    logger,
  });
  const registration = { id, version: renderer.version, isolation: renderer.isolation, concurrency };
  const ticks = startTicks({ db: db.pool, worker, registration, metrics, logger });
  // Before it reports ready: the tables may not be migrated yet (the api migrates), then the ticks retry.
  await ticks.heartbeat().catch((err: unknown) => logger.warn({ err }, 'registering this renderer failed; trying again'));
  let stopping = false;
  const health = await startHealthServer({
    port: config.BROKKR__HEALTH__PORT,
    registry,
    checks: { postgres: pgCheck(db.pool), queue: queueCheck(() => listener.listening, ticks) },
    logger,
    isShuttingDown: () => stopping,
  });
  logger.info({ port: health.port, id, concurrency }, `renderer started; health on http://0.0.0.0:${health.port}`);
  return {
    async stop() {
      stopping = true;
      // No heartbeat after this: the row goes now, so the api stops counting on this renderer.
      await ticks.stop();
      await unregisterRenderer(db.pool, id).catch((err: unknown) => logger.warn({ err }, 'unregistering this renderer failed'));
      await listener.close();
      const finished = await worker.stop(STOP_GRACE_MS);
      await renderer.close();
      await worker.settled();
      const released = await releaseRenderClaims(db.pool, id).catch(() => 0);
      if (!finished || released > 0) logger.info({ released }, 'renders cut short by the stop: their jobs were released');
      await health.close();
      await db.close();
      await telemetry.shutdown();
    },
  };
}
