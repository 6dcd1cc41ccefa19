import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import type { Logger } from '@brokkr/logger';

export interface TelemetrySettings {
  serviceName: string;
  /** Off by default: nothing is started and every OpenTelemetry API call stays a no-op. */
  enabled: boolean;
  /** OTLP/HTTP base URL (`http://collector:4318`); `/v1/traces` is appended. */
  otlpEndpoint: string;
  /** Share of new traces that are recorded (0..1); a propagated parent's decision always wins. */
  samplingRate: number;
  /** Library instrumentations (http, express, pg, …) chosen by the service. */
  instrumentations?: NodeSDKConfiguration['instrumentations'];
  /** Receives the SDK's own warnings (export failures) instead of the console. */
  logger?: Logger;
}

export interface Telemetry {
  /** Flushes pending spans and unregisters the SDK. Safe to call more than once. */
  shutdown(): Promise<void>;
}

const NOOP: Telemetry = { shutdown: async () => undefined };

export function tracesUrl(otlpEndpoint: string): string {
  const base = otlpEndpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

function diagLogger(logger: Logger): DiagLogger {
  const log = logger.child({ component: 'otel' });
  return {
    error: (message, ...args) => log.error({ args }, message),
    warn: (message, ...args) => log.warn({ args }, message),
    info: (message, ...args) => log.info({ args }, message),
    debug: (message, ...args) => log.debug({ args }, message),
    verbose: (message, ...args) => log.trace({ args }, message),
  };
}

/**
 * Starts tracing (traces only: metrics are Prometheus via prom-client, logs go to stdout). With
 * ESM services, call it from a module loaded by `node --import` so instrumentations can hook
 * libraries before the application imports them.
 */
export function startTelemetry(settings: TelemetrySettings): Telemetry {
  if (!settings.enabled) return NOOP;
  if (settings.logger) diag.setLogger(diagLogger(settings.logger), DiagLogLevel.WARN);
  const sdk = new NodeSDK({
    serviceName: settings.serviceName,
    traceExporter: new OTLPTraceExporter({ url: tracesUrl(settings.otlpEndpoint) }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
    instrumentations: settings.instrumentations ?? [],
    // Explicitly empty so OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER cannot switch them on.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  let stopping: Promise<void> | undefined;
  return {
    shutdown: () =>
      (stopping ??= sdk.shutdown().finally(() => {
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      })),
  };
}
