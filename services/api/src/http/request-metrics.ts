import type { RequestHandler } from 'express';
import type { ApiMetrics } from '../metrics/api-metrics.ts';

/** Requests no route claimed share one label, so random paths cannot grow the series count. */
export const UNMATCHED_ENDPOINT = 'unmatched';

export function requestMetrics(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const endpoint = typeof res.locals.endpoint === 'string' ? res.locals.endpoint : UNMATCHED_ENDPOINT;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequests.inc({ endpoint, method: req.method, status: String(res.statusCode) });
      metrics.httpDuration.observe({ endpoint, method: req.method }, seconds);
    });
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
