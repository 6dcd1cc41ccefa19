import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import type { DeliveryOutcome } from './metrics.ts';
import type { DeliveryReport, PendingWebhookDelivery } from './types.ts';

/** Brokkr reports the first 500 characters of a non-2xx body; a few KiB always hold them. */
const ERROR_BODY_CHARS = 500;
const ERROR_BODY_BYTES = 4096;
/** A 2xx body is read (so the connection can be reused) up to this size, then dropped. */
const SUCCESS_BODY_LIMIT = 64 * 1024;
const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

export interface SendOptions {
  dispatcher: Dispatcher;
  /** Aborts the POST (shutdown grace over): the delivery is then left to the broker's lease. */
  signal: AbortSignal;
  userAgent: string;
}

/** `skipped`: cut off by the shutdown grace, nothing to report (the broker's lease re-offers it). */
export type SendResult = { outcome: 'skipped' } | { outcome: Exclude<DeliveryOutcome, 'skipped'>; report: DeliveryReport };

/**
 * Brokkr's headers, then the broker-signed Standard Webhooks headers
 * when it sent them. Only those three names are taken from the broker, so it cannot override
 * the others.
 */
export function deliveryHeaders(delivery: PendingWebhookDelivery, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'x-brokkr-event-type': delivery.event_type,
    'x-brokkr-delivery-id': delivery.id,
  };
  if (delivery.auth_header) headers.authorization = delivery.auth_header;
  for (const name of SIGNATURE_HEADERS) {
    const value = delivery.webhook_headers?.[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * One POST of the payload, verbatim, within the delivery's timeout. Redirects are not followed
 * (undici's request never does): a 3xx is a failure like any non-2xx. There is no SSRF guard
 * here on purpose: in-cluster endpoints are what agent delivery is for.
 */
export async function sendDelivery(delivery: PendingWebhookDelivery, options: SendOptions): Promise<SendResult> {
  const timeoutMs = Math.max(1, delivery.timeout_seconds) * 1000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await request(delivery.url, {
      method: 'POST',
      headers: deliveryHeaders(delivery, options.userAgent),
      body: delivery.payload,
      dispatcher: options.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.any([timeout, options.signal]),
    });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      await res.body.dump({ limit: SUCCESS_BODY_LIMIT }).catch(() => undefined);
      return { outcome: 'success', report: { success: true, status_code: res.statusCode, duration_ms: elapsed() } };
    }
    const text = await bodyPrefix(res.body);
    return {
      outcome: 'failure',
      report: { success: false, status_code: res.statusCode, error: `HTTP ${res.statusCode}: ${text}`, duration_ms: elapsed() },
    };
  } catch (err) {
    if (options.signal.aborted && !timeout.aborted) return { outcome: 'skipped' };
    return { outcome: 'error', report: { success: false, error: describeFailure(err, timeout.aborted), duration_ms: elapsed() } };
  }
}

/** The first 500 characters of an error body; the rest is not read (the connection is dropped). */
async function bodyPrefix(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // A body cut short still says something; keep what arrived. (Leaving the loop early destroys the stream.)
  }
  return Array.from(new TextDecoder().decode(Buffer.concat(chunks)))
    .slice(0, ERROR_BODY_CHARS)
    .join('');
}

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

function errorText(err: unknown): string {
  const e = err as { message?: unknown; cause?: { message?: unknown } } | null;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  return typeof e?.cause?.message === 'string' && e.cause.message && e.cause.message !== message
    ? `${message}: ${e.cause.message}`
    : message;
}

/** Brokkr's wording (`Request timed out`, `Connection failed`, `Request error: …`, `Error: …`), with the cause where it helps. */
export function describeFailure(err: unknown, timedOut: boolean): string {
  const code = errorCode(err);
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) return 'Request timed out';
  if (code !== undefined && CONNECTION_CODES.has(code)) return `Connection failed: ${errorText(err)}`;
  if (code?.startsWith('UND_ERR') || code?.startsWith('ERR_') || err instanceof TypeError) return `Request error: ${errorText(err)}`;
  return `Error: ${errorText(err)}`;
}
