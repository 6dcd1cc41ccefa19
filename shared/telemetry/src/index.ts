export { startTelemetry, tracesUrl, type Telemetry, type TelemetrySettings } from './tracing.ts';
export {
  createMetricsRegistry,
  metricsFor,
  DURATION_BUCKETS,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricsRegistrySettings,
} from './metrics.ts';
