import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { inventoryCounts } from './sql/inventory-counts.ts';
import type { ApiMetrics } from './api-metrics.ts';

/** Scrapes more often than this reuse the last counts, so a busy scraper cannot load the database. */
const MIN_REFRESH_MS = 5000;

/** Refreshes the inventory gauges on scrape (at most every few seconds); a DB error keeps the last values. */
export function inventoryRefresher(db: Queryable, metrics: ApiMetrics, logger: Logger): () => Promise<void> {
  let last = 0;
  let running: Promise<void> | undefined;
  async function refresh(): Promise<void> {
    try {
      const counts = await inventoryCounts(db);
      metrics.activeAgents.set(counts.active_agents);
      metrics.stacksTotal.set(counts.stacks);
      metrics.deploymentObjectsTotal.set(counts.deployment_objects);
      last = Date.now();
    } catch (err) {
      logger.warn({ err }, 'inventory gauges not refreshed');
    }
  }
  return async () => {
    if (Date.now() - last < MIN_REFRESH_MS) return;
    running ??= refresh().finally(() => (running = undefined));
    await running;
  };
}
