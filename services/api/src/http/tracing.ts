import { context, propagation, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { RequestHandler, Response } from 'express';

const tracer = trace.getTracer('brokkr-api');

/**
 * One SERVER span per request, continuing an incoming `traceparent`. There is no HTTP
 * auto-instrumentation in the image, and this is all the trace needs: its context is what the
 * outbox stores with each event, so the trace continues through NATS to the webhook dispatcher.
 * Mounted only when telemetry is enabled.
 */
export function serverSpans(): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    const active = trace.setSpan(parent, span);
    res.locals.traceContext = active;
    res.once('finish', () => {
      const endpoint = typeof res.locals.endpoint === 'string' ? res.locals.endpoint : undefined;
      if (endpoint) {
        span.updateName(`${req.method} ${endpoint}`);
        span.setAttribute('http.route', endpoint);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(active, next);
  };
}

/**
 * Re-enters the request's trace context. Body reading resumes on socket events, which run
 * outside the context the span was started in, so handlers call this to get it back.
 */
export function withRequestContext<T>(res: Response, fn: () => T): T {
  const ctx = res.locals.traceContext as Context | undefined;
  return ctx ? context.with(ctx, fn) : fn();
}
