import { STATUS_CODES } from 'node:http';

/**
 * The one retry policy, for deliveries the dispatcher sends and for those agents send and report
 * through the api (Brokkr's schedule, plus jitter, a cap and Retry-After):
 * 2xx → success; 408, 425, 429, 5xx, 3xx, other codes, transport errors and timeouts → retry;
 * other 4xx → dead at once. `max_retries` caps the total number of attempts (0 and 1 both mean
 * one). The n-th failed attempt is retried after 2^n s ± 25 %, at most `maxBackoffSeconds`,
 * never sooner than the receiver's Retry-After (the dispatcher sees it; an agent's report does
 * not carry it).
 */
export type AttemptResult =
  | { kind: 'response'; status: number; bodyPrefix: string; retryAfterSeconds?: number | undefined }
  | { kind: 'transport'; message: string; retryable: boolean };

export type Decision = { kind: 'success' } | { kind: 'retry'; delaySeconds: number; error: string } | { kind: 'dead'; error: string };

/** What follows a failed attempt. */
export type AfterFailure = { kind: 'retry'; delaySeconds: number } | { kind: 'dead' };

export interface FailedAttempt {
  retryable: boolean;
  /** Attempts recorded before this one (an interrupted one included). */
  attemptsBefore: number;
  maxRetries: number;
  retryAfterSeconds?: number | undefined;
}

export interface RetrySettings {
  /** `BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS`. */
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

/** An agent's report without a status code is a transport failure on its side: retryable. */
export function isRetryableReport(statusCode: number | undefined): boolean {
  return statusCode === undefined || isRetryableStatus(statusCode);
}

/** `Retry-After` as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const seconds = /^\s*\d+\s*$/.test(text) ? Number(text) : (Date.parse(text) - now) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_SECONDS);
}

/**
 * Exponential backoff (2^n s after the n-th attempt, as Brokkr) with ±25 % jitter so that
 * deliveries failing together do not retry together, capped; never sooner than Retry-After.
 */
export function backoffSeconds(attempt: number, settings: RetrySettings, retryAfterSeconds?: number): number {
  const random = settings.random ?? Math.random;
  const base = Math.min(settings.maxBackoffSeconds, 2 ** Math.min(attempt, 30));
  const jittered = base * (0.75 + random() * 0.5);
  return Math.max(jittered, retryAfterSeconds ?? 0);
}

/** Dead when the failure is final or the attempt budget is spent, else a retry after the backoff. */
export function afterFailure(failure: FailedAttempt, settings: RetrySettings): AfterFailure {
  const attempt = failure.attemptsBefore + 1;
  if (!failure.retryable || attempt >= failure.maxRetries) return { kind: 'dead' };
  return { kind: 'retry', delaySeconds: backoffSeconds(attempt, settings, failure.retryAfterSeconds) };
}

/** The dispatcher's last_error wording (Brokkr's, broker path). */
function errorText(result: AttemptResult): string {
  if (result.kind === 'transport') return `Request failed: ${result.message}`;
  const reason = STATUS_CODES[result.status] ?? 'Unknown';
  return `HTTP ${result.status} ${reason}: ${result.bodyPrefix.slice(0, 200)}`;
}

/** One POST's result, as the dispatcher saw it, turned into the delivery's next state. */
export function decide(result: AttemptResult, attemptsBefore: number, maxRetries: number, settings: RetrySettings): Decision {
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { kind: 'success' };
  const error = errorText(result);
  const next = afterFailure(
    {
      retryable: result.kind === 'transport' ? result.retryable : isRetryableStatus(result.status),
      attemptsBefore,
      maxRetries,
      retryAfterSeconds: result.kind === 'response' ? result.retryAfterSeconds : undefined,
    },
    settings,
  );
  return next.kind === 'dead' ? { kind: 'dead', error } : { ...next, error };
}
