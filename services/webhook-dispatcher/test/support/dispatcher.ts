import { parseEnv, webhookDispatcherConfigSchema } from '@brokkr/config';
import { connectBus, ensureStreams } from '@brokkr/bus';
import { createDb } from '@brokkr/db';
import { createLogger } from '@brokkr/logger';
import { createMetricsRegistry, type Registry } from '@brokkr/telemetry';
import { serviceBusSettings } from '@brokkr/testkit';
import { startDispatcher } from '../../src/index.ts';
import { KEY_HEX } from './fixtures.ts';

export interface InProcessDispatcher {
  metrics: Registry;
  stop(): Promise<void>;
}

/** A dispatcher replica inside the test process, with its own Postgres pool and NATS connection. */
export async function startInProcessDispatcher(
  urls: { db: string; nats: string },
  env: Record<string, string> = {},
  stopGraceMs?: number,
): Promise<InProcessDispatcher> {
  const config = parseEnv(webhookDispatcherConfigSchema, {
    BROKKR__DATABASE__URL: urls.db,
    BROKKR__NATS__URL: urls.nats,
    BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
    BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: '1',
    ...env,
  });
  const logger = createLogger({ service: 'webhook-dispatcher', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const db = createDb({ url: urls.db, poolSize: 10 });
  const bus = await connectBus({ ...serviceBusSettings(urls.nats, 'webhook-dispatcher'), name: 'test-dispatcher', logger });
  await ensureStreams(bus.jsm);
  const metrics = createMetricsRegistry({ service: 'webhook-dispatcher', defaultMetrics: false });
  try {
    const dispatcher = await startDispatcher({ config, logger, db, bus, metrics, ...(stopGraceMs === undefined ? {} : { stopGraceMs }) });
    return {
      metrics,
      async stop() {
        await dispatcher.stop();
        await bus.close();
        await db.close();
      },
    };
  } catch (err) {
    await bus.close();
    await db.close();
    throw err;
  }
}
