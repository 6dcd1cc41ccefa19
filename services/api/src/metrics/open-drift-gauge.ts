import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { Gauge, type Registry } from '@brokkr/telemetry';
import { openDriftPerStack, type OpenDrift } from './sql/open-drift.ts';

/** Scrapes more often than this reuse the last counts, so a busy scraper cannot load the database. */
const MIN_REFRESH_MS = 5000;
const NAME = 'brokkr_drift_open_records';

/**
 * `brokkr_drift_open_records{stack_id, stack_name}`: open drift records per stack, read from the
 * database when /metrics is scraped, so every replica tells the same. A stack without open drift
 * has no series (alert on `> 0`). It names stacks, tenants' data, so it is registered where the
 * per-agent series are: the metrics port only.
 */
export function registerOpenDriftGauge(db: Queryable, registry: Registry, logger: Logger): void {
  if (registry.getSingleMetric(NAME)) return;
  let last: { at: number; counts: OpenDrift[] } | undefined;
  new Gauge({
    name: NAME,
    help: 'Open drift records per stack (changes made behind the agent, not corrected, resolved or accepted yet)',
    labelNames: ['stack_id', 'stack_name'] as const,
    registers: [registry],
    async collect() {
      const now = Date.now();
      if (!last || now - last.at >= MIN_REFRESH_MS) {
        try {
          last = { at: now, counts: await openDriftPerStack(db) };
        } catch (err) {
          logger.warn({ err }, 'open drift counts not refreshed');
          if (!last) return;
        }
      }
      this.reset();
      for (const c of last.counts) this.set({ stack_id: c.stack_id, stack_name: c.stack_name }, c.open);
    },
  });
}
