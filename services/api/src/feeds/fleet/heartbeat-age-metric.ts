import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { Gauge, type Registry } from '@brokkr/telemetry';
import { heartbeatAges } from './sql/heartbeat-ages.ts';

/** Scrapes more often than this reuse the last ages (plus the time since), so a busy scraper cannot load the database. */
const MIN_REFRESH_MS = 5000;

/**
 * `brokkr_agent_heartbeat_age_seconds{agent_id, agent_name}`, computed from `agents.last_heartbeat`
 * when /metrics is scraped, so it is right whichever replica or path (REST or the live channel)
 * took the heartbeat. Brokkr refreshes it every 30 s, zeroes it on REST heartbeats only, and never
 * removes deleted agents' series; here the series are exactly the live agents that have heartbeated.
 */
export function registerHeartbeatAgeGauge(db: Queryable, registry: Registry, logger: Logger): void {
  let last: { at: number; ages: { id: string; name: string; age: number | null }[] } | undefined;
  new Gauge({
    name: 'brokkr_agent_heartbeat_age_seconds',
    help: 'Seconds since each live agent last heartbeated (REST or live channel)',
    labelNames: ['agent_id', 'agent_name'] as const,
    registers: [registry],
    async collect() {
      const now = Date.now();
      if (!last || now - last.at >= MIN_REFRESH_MS) {
        try {
          last = { at: now, ages: await heartbeatAges(db) };
        } catch (err) {
          logger.warn({ err }, 'heartbeat ages not refreshed');
          if (!last) return;
        }
      }
      const drift = Math.floor((now - last.at) / 1000);
      this.reset();
      for (const a of last.ages) if (a.age !== null) this.set({ agent_id: a.id, agent_name: a.name }, a.age + drift);
    },
  });
}
