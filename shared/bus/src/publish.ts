import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { JetStreamClientImpl } from '@nats-io/jetstream/internal';
import { ackPublisherFor } from './ack-publisher.ts';
import { injectTraceContext, traceHeaders } from './trace.ts';

export interface PublishJsonOptions {
  /** Becomes `Nats-Msg-Id`: the stream drops a repeat within its duplicate window. Use the row id. */
  msgID: string;
  /** Extra headers; the trace context is added to them. */
  headers?: Record<string, string>;
  /** Overrides the active context's trace parent (relayed outbox rows carry their own). */
  traceparent?: string;
  /** Milliseconds to wait for the PubAck (default: the client's timeout, 5 s unless set). */
  timeoutMs?: number;
}

function buildHeaders(extra: Record<string, string> | undefined, traceparent: string | undefined): MsgHdrs {
  const h = natsHeaders();
  if (extra) for (const key in extra) h.set(key, extra[key] as string);
  return injectTraceContext(h, traceparent);
}

/**
 * Publishes a JSON payload to JetStream and waits for the stream's acknowledgement, pipelined
 * through the connection's AckPublisher (many publishes in flight, no per-publish timer or
 * request). `ack.duplicate === true` means the stream already had this msgID, which callers
 * treat as success. A failure is a PublishAckError; a subject no stream takes fails at once.
 */
export function publishJson(js: JetStreamClient, subject: string, payload: unknown, options: PublishJsonOptions): Promise<PubAck> {
  const headers = buildHeaders(options.headers, options.traceparent);
  const data = JSON.stringify(payload);
  // Every client made by `jetstream(nc)` (connectBus's `js` is one) is a JetStreamClientImpl; any
  // other implementation (none today) keeps the client's own request path.
  if (!(js instanceof JetStreamClientImpl)) {
    return js.publish(subject, data, { msgID: options.msgID, headers, ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}) });
  }
  return ackPublisherFor(js.nc).publish(subject, data, { msgID: options.msgID, headers, timeoutMs: options.timeoutMs ?? js.timeout });
}

/**
 * Fire-and-forget core NATS publish for hints (wake-ups, cache invalidation). Nothing is stored:
 * a hint lost while NATS is down only delays work that a timer also picks up.
 */
export function publishCore(nc: NatsConnection, subject: string, payload: unknown = {}, extra?: Record<string, string>): void {
  let h = traceHeaders();
  if (extra) {
    h ??= natsHeaders();
    for (const [name, value] of Object.entries(extra)) h.set(name, value);
  }
  nc.publish(subject, JSON.stringify(payload), h ? { headers: h } : undefined);
}
