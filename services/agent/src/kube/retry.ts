import { backoffDelay, sleep } from '../util/async.ts';
import { isRetryable, KubeApiError } from './errors.ts';

export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseMs: 200, maxMs: 5000 };

/** Runs `fn`, retrying 429/5xx/no-answer with exponential backoff and jitter; honours Retry-After. */
export async function withRetries<T>(fn: () => Promise<T>, policy: RetryPolicy = DEFAULT_RETRY, signal?: AbortSignal): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= policy.attempts || !isRetryable(err) || signal?.aborted) throw err;
      const retryAfter = err instanceof KubeApiError && err.retryAfterSeconds ? err.retryAfterSeconds * 1000 : 0;
      await sleep(Math.min(policy.maxMs, Math.max(retryAfter, backoffDelay(attempt, policy.baseMs, policy.maxMs))), signal);
    }
  }
}
