import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricsRegistrySettings {
  /** Added as the `service` label to every series. */
  service: string;
  /** Process metrics: CPU, memory, event-loop lag, GC, handles. Default true. */
  defaultMetrics?: boolean;
}

/** One registry per service, served on /metrics by `@brokkr/health` or the api. */
export function createMetricsRegistry(settings: MetricsRegistrySettings): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service: settings.service });
  if (settings.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Seconds; spans fast DB calls up to a slow webhook POST. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

/** Metric constructors bound to one registry, so no metric lands in prom-client's global one. */
export function metricsFor(registry: Registry) {
  return {
    counter: <L extends string>(spec: MetricSpec<L>) =>
      new Counter<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] }),
    gauge: <L extends string>(spec: MetricSpec<L>) => new Gauge<L>({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] }),
    histogram: <L extends string>(spec: MetricSpec<L> & { buckets?: number[] }) =>
      new Histogram<L>({ ...spec, labelNames: spec.labelNames ?? [], buckets: spec.buckets ?? DURATION_BUCKETS, registers: [registry] }),
  };
}

export { Counter, Gauge, Histogram, Registry };
