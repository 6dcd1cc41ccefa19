import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import type { Logger } from '@brokkr/logger';

export interface TelemetrySettings {
  serviceName: string;
  /** Off by default: nothing is started (or even loaded) and every OpenTelemetry API call stays a no-op. */
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
  /**
   * Settles once the SDK is loaded and started (at once when disabled); spans begun before it are
   * not recorded. `await startTelemetry(…)` waits for it; rejects if the SDK cannot be loaded.
   */
  ready: Promise<void>;
  /** Flushes pending spans and unregisters the SDK. Safe to call more than once. */
  shutdown(): Promise<void>;
}

export function tracesUrl(otlpEndpoint: string): string {
  const base = otlpEndpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

/**
 * Starts tracing (traces only: metrics are Prometheus via prom-client, logs go to stdout). The SDK
 * module (sdk.ts) is imported only when telemetry is enabled, so a process with telemetry off
 * never loads it (ADR 0026); await `ready` before serving. With ESM services and library
 * instrumentations, call it from a module loaded by `node --import` so they can hook libraries
 * before the application imports them.
 */
export function startTelemetry(settings: TelemetrySettings): Telemetry {
  const started = settings.enabled ? import('./sdk.ts').then(({ startSdk }) => startSdk(settings)) : Promise.resolve(undefined);
  let stopping: Promise<void> | undefined;
  return {
    ready: started.then(() => undefined),
    shutdown: () =>
      (stopping ??= started.then(
        (stop) => stop?.(),
        () => undefined, // never started: nothing to flush
      )),
  };
}
