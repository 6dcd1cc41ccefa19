import type { HealthStatus } from '@brokkr/contracts';

/** Brokkr's order: failing > degraded > healthy > unknown (also for no records at all). */
export function overallStatus(statuses: Iterable<string>): HealthStatus {
  const seen = new Set(statuses);
  for (const s of ['failing', 'degraded', 'healthy'] as const) if (seen.has(s)) return s;
  return 'unknown';
}
