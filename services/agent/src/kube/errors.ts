/** A Kubernetes API failure: an HTTP status with its `Status` object, or no answer (status 0). */
export class KubeApiError extends Error {
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly status: number,
    readonly reason: string | undefined,
    message: string,
    options: { retryAfterSeconds?: number | undefined; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'KubeApiError';
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

const RETRYABLE_REASONS = new Set(['ServiceUnavailable', 'InternalError', 'Timeout', 'ServerTimeout', 'TooManyRequests']);

/**
 * Worth another attempt: throttling (429), server trouble (5xx) and no answer at all. Unlike
 * Brokkr's agent we also retry dropped connections: an apiserver restart is the usual cause.
 */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof KubeApiError)) return false;
  if (isApplyTypeError(err)) return false;
  if (err.status === 0 || err.status === 429 || err.status >= 500) return true;
  return err.reason !== undefined && RETRYABLE_REASONS.has(err.reason);
}

/**
 * The apiserver answers a server-side apply whose body does not fit the schema (a number where a
 * string belongs) with a 500 "failed to create typed patch object": bad input, not a server
 * fault, so retrying cannot help.
 */
function isApplyTypeError(err: KubeApiError): boolean {
  return err.status === 500 && err.message.includes('failed to create typed patch object');
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.status === 404;
