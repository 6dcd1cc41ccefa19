/**
 * The OpenTelemetry SDK half of tracing.ts, in a module of its own so that it is loaded only when
 * telemetry is on: `@opentelemetry/sdk-node` pulls in every exporter it can configure (gRPC,
 * zipkin, the configuration-file validator) and node's bundled undici, about 40 MiB of RSS and
 * 10 MiB of heap that a process with telemetry off (the default) never uses (ADR 0026).
 */
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import type { Logger } from '@brokkr/logger';
import { tracesUrl, type TelemetrySettings } from './tracing.ts';

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

/** Starts the SDK; the returned function flushes pending spans and puts the API back to no-op. */
export function startSdk(settings: TelemetrySettings): () => Promise<void> {
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
  return () =>
    sdk.shutdown().finally(() => {
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    });
}
