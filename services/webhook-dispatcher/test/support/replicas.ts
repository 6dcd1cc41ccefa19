import { freePort, spawnService, type RunningService } from '@brokkr/testkit';
import { KEY_HEX } from './fixtures.ts';

/** A dispatcher replica as its own process (the real main), ready when /readyz answers. */
export async function spawnDispatcher(urls: { db: string; nats: string }, env: Record<string, string> = {}): Promise<RunningService> {
  const port = await freePort();
  return spawnService({
    service: 'webhook-dispatcher',
    env: {
      BROKKR__DATABASE__URL: urls.db,
      BROKKR__NATS__URL: urls.nats,
      BROKKR__HEALTH__PORT: String(port),
      BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
      BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      BROKKR__BROKER__WEBHOOK_DELIVERY_INTERVAL_SECONDS: '1',
      BROKKR__LOG__LEVEL: 'warn',
      ...env,
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  });
}
