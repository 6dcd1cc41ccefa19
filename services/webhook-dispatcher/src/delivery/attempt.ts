import { EgressBlockedError } from '@brokkr/crypto';
import { parseRetryAfter, type AttemptResult } from '@brokkr/webhook-deliveries';
import type { PostInput, WebhookHttpClient } from './http-client.ts';

function findBlocked(err: unknown): EgressBlockedError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof EgressBlockedError) return e;
    if (e instanceof AggregateError) {
      const inner = e.errors.find((x) => x instanceof EgressBlockedError) as EgressBlockedError | undefined;
      if (inner) return inner;
    }
  }
  return undefined;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  const code = (err as { code?: string }).code;
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${code ? `${code}: ` : ''}${err.message}${cause}`;
}

/** undici refused to build the request (a header value it cannot send): the same every time. */
function isInvalidRequest(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'UND_ERR_INVALID_ARG';
}

/**
 * One POST, turned into an AttemptResult. Never throws. An address refused by the SSRF guard or
 * a request undici refuses to build is final (retrying cannot change the verdict); every other
 * transport error or timeout is retried.
 */
export async function attemptPost(client: WebhookHttpClient, input: PostInput): Promise<AttemptResult> {
  try {
    const res = await client.post(input);
    return {
      kind: 'response',
      status: res.status,
      bodyPrefix: res.bodyPrefix,
      retryAfterSeconds: parseRetryAfter(res.headers['retry-after']),
    };
  } catch (err) {
    const blocked = findBlocked(err);
    if (blocked) return { kind: 'transport', message: blocked.message, retryable: false };
    return { kind: 'transport', message: describe(err), retryable: !isInvalidRequest(err) };
  }
}
