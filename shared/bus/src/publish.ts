import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { injectTraceContext } from './trace.ts';

export interface PublishJsonOptions {
  /** Becomes `Nats-Msg-Id`: the stream drops a repeat within its duplicate window. Use the row id. */
  msgID: string;
  /** Extra headers; the trace context is added to them. */
  headers?: Record<string, string>;
  /** Overrides the active context's trace parent (relayed outbox rows carry their own). */
  traceparent?: string;
  /** Milliseconds to wait for the PubAck. */
  timeoutMs?: number;
}

function buildHeaders(extra: Record<string, string> | undefined, traceparent: string | undefined): MsgHdrs {
  const h = natsHeaders();
  for (const [key, value] of Object.entries(extra ?? {})) h.set(key, value);
  return injectTraceContext(h, traceparent);
}

/**
 * Publishes a JSON payload to JetStream and waits for the stream's acknowledgement.
 * `ack.duplicate === true` means the stream already had this msgID, which callers treat as success.
 */
export function publishJson(js: JetStreamClient, subject: string, payload: unknown, options: PublishJsonOptions): Promise<PubAck> {
  return js.publish(subject, JSON.stringify(payload), {
    msgID: options.msgID,
    headers: buildHeaders(options.headers, options.traceparent),
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  });
}

/**
 * Fire-and-forget core NATS publish for hints (wake-ups, cache invalidation). Nothing is stored:
 * a hint lost while NATS is down only delays work that a timer also picks up.
 */
export function publishCore(nc: NatsConnection, subject: string, payload: unknown = {}): void {
  const h = injectTraceContext();
  nc.publish(subject, JSON.stringify(payload), h.keys().length > 0 ? { headers: h } : undefined);
}
