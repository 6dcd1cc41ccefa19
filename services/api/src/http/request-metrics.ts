import type { RequestHandler } from 'express';
import type { ApiMetrics } from '../metrics/api-metrics.ts';

/** Requests no route claimed share one label, so random paths cannot grow the series count. */
export const UNMATCHED_ENDPOINT = 'unmatched';

/** Counts a finished request and observes its duration, labelled by route template (or `unmatched`). */
export function observeRequest(
  metrics: ApiMetrics,
  { endpoint, method, status, started }: { endpoint: unknown; method: string; status: number; started: bigint },
): void {
  const label = typeof endpoint === 'string' ? endpoint : UNMATCHED_ENDPOINT;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  metrics.httpRequests.inc({ endpoint: label, method, status: String(status) });
  metrics.httpDuration.observe({ endpoint: label, method }, seconds);
}

export function requestMetrics(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () =>
      observeRequest(metrics, { endpoint: res.locals.endpoint, method: req.method, status: res.statusCode, started }),
    );
    next();
  };
}

/** For the root routes (probes, docs, metrics): labels them like the API routes. */
export function endpointLabel(endpoint: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.endpoint = endpoint;
    next();
  };
}
