import { context, propagation, ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/**
 * There is no OpenTelemetry instrumentation for nats.js, so the W3C trace context travels in
 * message headers by hand: HTTP request → outbox → NATS → dispatcher → outbound HTTP.
 * Without a registered SDK the global propagator is a no-op and nothing is written.
 */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

const setter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, String(value)),
};

const getter: TextMapGetter<MsgHdrs | undefined> = {
  get: (carrier, key) => carrier?.get(key) || undefined,
  keys: (carrier) => (carrier ? carrier.keys() : []),
};

/**
 * Writes the trace context into `headers` (created when absent). An explicit `traceparent`
 * (e.g. one stored with an outbox row, relayed later outside the original request) wins over
 * the active context.
 */
export function injectTraceContext(headers: MsgHdrs = natsHeaders(), traceparent?: string, ctx: Context = context.active()): MsgHdrs {
  if (traceparent) {
    headers.set(TRACEPARENT, traceparent);
    return headers;
  }
  propagation.inject(ctx, headers, setter);
  return headers;
}

/**
 * Headers carrying the active trace context, or undefined when there is none (no SDK registered,
 * no active span): a hint publish then goes out without building a headers object at all.
 */
export function traceHeaders(ctx: Context = context.active()): MsgHdrs | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  let headers: MsgHdrs | undefined;
  for (const key in carrier) (headers ??= natsHeaders()).set(key, carrier[key] as string);
  return headers;
}

/** The context a consumer should start its CONSUMER span under. */
export function extractTraceContext(headers: MsgHdrs | undefined, base: Context = ROOT_CONTEXT): Context {
  return propagation.extract(base, headers, getter);
}

/** The traceparent of the active span, if any, for storing next to work that is relayed later. */
export function currentTraceparent(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier[TRACEPARENT];
}
