import type { Logger } from '@brokkr/logger';
import type { BrokerClient } from '../broker/client.ts';
import type { HealthRecord, HealthStatus } from '../broker/types.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { AgentMetrics } from '../metrics.ts';
import { Wakeup } from '../util/async.ts';
import { PodAttribution } from './attribute.ts';
import { summarizePods } from './classify.ts';

export interface HealthMonitorDeps {
  broker: BrokerClient;
  objects: KubeObjects;
  discovery: Discovery;
  metrics: AgentMetrics;
  logger: Logger;
  agentId: string;
  watchNamespace: string | undefined;
  checkIntervalMs: number;
  reportIntervalMs: number;
  /** How long a pod may be not Ready before it counts as degraded (classify.ts). */
  readinessGraceMs: number;
  isActive(): boolean;
}

/**
 * Deployment health: pods are inspected every check interval; the broker hears about every
 * tracked deployment object at least every report interval, and at once when a status (or the
 * tracked set) changes.
 */
export class HealthMonitor {
  private tracked: string[] = [];
  private readonly sent = new Map<string, HealthStatus>();
  private lastReportAt = 0;
  private readonly wake = new Wakeup();

  constructor(private readonly deps: HealthMonitorDeps) {}

  /** The deployment objects currently applied; a change triggers a check right away. */
  track(ids: string[]): void {
    const next = [...ids].sort();
    if (next.join() === this.tracked.join()) return;
    this.tracked = next;
    this.wake.notify();
  }

  async check(now = Date.now()): Promise<void> {
    if (!this.tracked.length) return;
    const records = await this.inspect(now);
    const changed = records.length !== this.sent.size || records.some((r) => this.sent.get(r.id) !== r.status);
    if (!changed && now - this.lastReportAt < this.deps.reportIntervalMs) return;
    try {
      await this.deps.broker.reportHealth(this.deps.agentId, records);
      this.deps.metrics.healthReports.inc({ status: 'success' });
      this.lastReportAt = now;
      this.sent.clear();
      for (const r of records) this.sent.set(r.id, r.status);
      if (changed) this.deps.logger.info({ health: Object.fromEntries(this.sent) }, 'deployment health reported');
    } catch (err) {
      this.deps.metrics.healthReports.inc({ status: 'error' });
      this.deps.logger.warn({ err }, 'reporting deployment health failed');
    }
  }

  /** If the pods cannot be listed every object is `unknown`, as in Brokkr. */
  private async inspect(now: number): Promise<HealthRecord[]> {
    const ids = this.tracked;
    const checkedAt = new Date(now).toISOString();
    const rule = { graceMs: this.deps.readinessGraceMs, now };
    try {
      const attribution = new PodAttribution(this.deps.objects, this.deps.discovery);
      const pods = await attribution.podsByObject(new Set(ids), this.deps.watchNamespace);
      return ids.map((id) => ({ id, checked_at: checkedAt, ...summarizePods(pods.get(id) ?? [], rule) }));
    } catch (err) {
      this.deps.logger.warn({ err }, 'listing pods for deployment health failed');
      return ids.map((id) => ({
        id,
        status: 'unknown',
        checked_at: checkedAt,
        summary: { pods_ready: 0, pods_total: 0, conditions: [], resources: [] },
      }));
    }
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.wake.wait(this.deps.checkIntervalMs, signal);
      if (signal.aborted || !this.deps.isActive()) continue;
      await this.check().catch((err: unknown) => this.deps.logger.warn({ err }, 'health check failed'));
    }
  }
}
