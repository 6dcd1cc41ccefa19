import { STATUS_CODES } from 'node:http';

/**
 * What one attempt's result means for the delivery (contract §5.5, plus Retry-After and jitter):
 * 2xx → success; 408, 425, 429, 5xx, 3xx, other codes, transport errors and timeouts → retry;
 * other 4xx → dead at once. `max_retries` caps the total number of attempts.
 */
export type AttemptResult =
  | { kind: 'response'; status: number; bodyPrefix: string; retryAfterSeconds?: number | undefined }
  | { kind: 'transport'; message: string; retryable: boolean };

export type Decision =
  | { kind: 'success' }
  | { kind: 'retry'; delaySeconds: number; error: string }
  | { kind: 'dead'; error: string };

export interface RetrySettings {
  maxBackoffSeconds: number;
  /** 0..1 source of randomness, injectable for tests. */
  random?: () => number;
}

const RETRYABLE_4XX = new Set([408, 425, 429]);
const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

export function isRetryableStatus(status: number): boolean {
  if (status >= 400 && status < 500) return RETRYABLE_4XX.has(status);
  return true;
}

/** `Retry-After` as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const seconds = /^\s*\d+\s*$/.test(text) ? Number(text) : (Date.parse(text) - now) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_SECONDS);
}

function errorText(result: AttemptResult): string {
  if (result.kind === 'transport') return `Request failed: ${result.message}`;
  const reason = STATUS_CODES[result.status] ?? 'Unknown';
  return `HTTP ${result.status} ${reason}: ${result.bodyPrefix.slice(0, 200)}`;
}

/**
 * Exponential backoff (2^n s after the n-th attempt, as Brokkr) with ±25 % jitter so that
 * deliveries failing together do not retry together; never sooner than the receiver's Retry-After.
 */
export function backoffSeconds(attempt: number, settings: RetrySettings, retryAfterSeconds?: number): number {
  const random = settings.random ?? Math.random;
  const base = Math.min(settings.maxBackoffSeconds, 2 ** Math.min(attempt, 30));
  const jittered = base * (0.75 + random() * 0.5);
  return Math.max(jittered, retryAfterSeconds ?? 0);
}

/** `attemptsBefore` = attempts recorded before this one. */
export function decide(result: AttemptResult, attemptsBefore: number, maxRetries: number, settings: RetrySettings): Decision {
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { kind: 'success' };
  const error = errorText(result);
  const retryable = result.kind === 'transport' ? result.retryable : isRetryableStatus(result.status);
  const attempt = attemptsBefore + 1;
  if (!retryable || attempt >= maxRetries) return { kind: 'dead', error };
  const retryAfter = result.kind === 'response' ? result.retryAfterSeconds : undefined;
  return { kind: 'retry', delaySeconds: backoffSeconds(attempt, settings, retryAfter), error };
}
