import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import type { ApiMetrics } from './api-metrics.ts';
import { inventoryRefresher } from './inventory-gauges.ts';
import { registerOpenDriftGauge } from './open-drift-gauge.ts';

export type Exposition = Pick<Registry, 'contentType' | 'metrics'>;

export interface Expositions {
  /** The public port's /metrics: no series that names an agent. */
  public: Exposition;
  /** The metrics port's /metrics: the public series plus the per-agent ones (api-metrics.ts). */
  all: Exposition;
}

/** Both /metrics answers of one api process; a scrape of either refreshes the inventory gauges first. */
export function createExpositions(db: Queryable, metrics: ApiMetrics, logger: Logger): Expositions {
  const refreshInventory = inventoryRefresher(db, metrics, logger);
  registerOpenDriftGauge(db, metrics.agentRegistry, logger);
  const { contentType } = metrics.registry;
  return {
    public: {
      contentType,
      async metrics() {
        await refreshInventory();
        return metrics.registry.metrics();
      },
    },
    all: {
      contentType,
      async metrics() {
        await refreshInventory();
        // Two text expositions with distinct metric names concatenate into one.
        return `${await metrics.registry.metrics()}\n${await metrics.agentRegistry.metrics()}`;
      },
    },
  };
}
