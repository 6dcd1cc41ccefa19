import type { z } from 'zod';
import { natsSettingsFrom, parseEnv, type NatsConfig, type NatsSettings } from '@brokkr/config';
import type { Logger } from '@brokkr/logger';
import { createDb, ensureSchema, type Db } from '@brokkr/db';
import { connectBus, ensureStreams, HUB_NATS_USERS, natsInboxPrefix, type Bus, type HubNatsUser } from '@brokkr/bus';
import { startHealthServer, pgCheck, natsCheck } from '@brokkr/health';
import { createMetricsRegistry, startTelemetry } from '@brokkr/telemetry';
import type { Registry } from 'prom-client';
import { runService, type RunningWork } from './service.ts';

/** The settings every hub service without an HTTP API shares (see shared/config fields). */
export interface HubConfig extends NatsConfig {
  BROKKR__DATABASE__URL: string;
  BROKKR__DATABASE__SCHEMA?: string | undefined;
  BROKKR__DATABASE__POOL_SIZE: number;
  BROKKR__LOG__LEVEL: string;
  BROKKR__LOG__FORMAT: 'json' | 'text';
  BROKKR__HEALTH__PORT: number;
  BROKKR__TELEMETRY__ENABLED: boolean;
  BROKKR__TELEMETRY__OTLP_ENDPOINT: string;
  BROKKR__TELEMETRY__SAMPLING_RATE: number;
}

export interface HubContext<C> {
  name: string;
  config: C;
  logger: Logger;
  db: Db;
  bus: Bus;
  metrics: Registry;
}

export interface HubServiceDefinition<S extends z.ZodType> {
  name: string;
  schema: S;
  start(ctx: HubContext<z.output<S>>): Promise<RunningWork>;
}

/**
 * The common life of a hub service (runService, plus its dependencies): telemetry, Postgres, NATS,
 * the service's own work, a health server, and on SIGTERM/SIGINT the reverse order (work → health
 * → NATS drain → pool → telemetry).
 */
export async function runHubService<S extends z.ZodType>(definition: HubServiceDefinition<S>): Promise<void> {
  await runService({
    name: definition.name,
    loadConfig: () => {
      const config = parseEnv(definition.schema) as z.output<S> & HubConfig;
      // Half-given NATS credentials are a configuration error, reported before anything starts.
      return { config, nats: natsSettingsFrom(config) };
    },
    log: ({ config }) => ({ level: config.BROKKR__LOG__LEVEL, format: config.BROKKR__LOG__FORMAT }),
    start: ({ config, nats }, logger) => startHub(definition, config, nats, logger),
  });
}

/** A hub service's replies come under its own inbox prefix, the one its NATS user may subscribe to. */
function inbox(name: string): { inboxPrefix?: string } {
  return (HUB_NATS_USERS as readonly string[]).includes(name) ? { inboxPrefix: natsInboxPrefix(name as HubNatsUser) } : {};
}

async function startHub<S extends z.ZodType>(
  definition: HubServiceDefinition<S>,
  config: z.output<S> & HubConfig,
  nats: NatsSettings,
  logger: Logger,
): Promise<RunningWork> {
  const telemetry = startTelemetry({
    serviceName: `brokkr-${definition.name}`,
    enabled: config.BROKKR__TELEMETRY__ENABLED,
    otlpEndpoint: config.BROKKR__TELEMETRY__OTLP_ENDPOINT,
    samplingRate: config.BROKKR__TELEMETRY__SAMPLING_RATE,
  });
  await telemetry.ready;
  const db = createDb({
    url: config.BROKKR__DATABASE__URL,
    schema: config.BROKKR__DATABASE__SCHEMA,
    poolSize: config.BROKKR__DATABASE__POOL_SIZE,
    applicationName: `brokkr-${definition.name}`,
  });
  await ensureSchema(db);
  const bus = await connectBus({ ...nats, name: `brokkr-${definition.name}`, logger, ...inbox(definition.name) });
  await ensureStreams(bus.jsm);
  const metrics = createMetricsRegistry({ service: definition.name });
  const work = await definition.start({ name: definition.name, config, logger, db, bus, metrics });
  const health = await startHealthServer({
    port: config.BROKKR__HEALTH__PORT,
    registry: metrics,
    checks: { postgres: pgCheck(db.pool), nats: natsCheck(bus.nc) },
    logger,
  });
  logger.info({ port: health.port }, `${definition.name} started; health on http://0.0.0.0:${health.port}`);
  return {
    async stop() {
      await work.stop();
      await health.close();
      await bus.close();
      await db.close();
      await telemetry.shutdown();
    },
  };
}
