import { freePort } from '@brokkr/infra';
import { spawnService, type RunningService } from './service.ts';

export interface TestRenderer extends RunningService {
  /** http://127.0.0.1:<health port>: /healthz, /readyz, /metrics. */
  healthUrl: string;
  /** The Prometheus exposition of its /metrics. */
  metrics(): Promise<string>;
}

export interface SpawnRendererOptions {
  /** A migrated database (the api's): the renderer claims its render jobs. */
  databaseUrl: string;
  /** The brokkr-render binary (locateRenderer() of @brokkr/render). */
  binary: string;
  /** More BROKKR__RENDERER__* (or any) settings. */
  env?: Record<string, string>;
}

/**
 * A renderer service process (services/renderer) on a test's database, ready once it listens for
 * jobs and has registered itself: an api on the same database sees it alive from then on.
 */
export async function spawnRenderer(options: SpawnRendererOptions): Promise<TestRenderer> {
  const port = await freePort();
  const healthUrl = `http://127.0.0.1:${port}`;
  const service = await spawnService({
    service: 'renderer',
    env: {
      BROKKR__DATABASE__URL: options.databaseUrl,
      BROKKR__HEALTH__PORT: String(port),
      BROKKR__RENDERER__BINARY: options.binary,
      ...options.env,
    },
    readyUrl: `${healthUrl}/readyz`,
  });
  return Object.assign(service, {
    healthUrl,
    metrics: async () => (await fetch(`${healthUrl}/metrics`)).text(),
  });
}
