import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request, type Dispatcher } from 'undici';
import { SourceError } from '../errors.ts';
import { assertHostAllowed, type SourcePolicy } from '../policy.ts';
import { sourceConnector } from './connector.ts';
import { readCapped } from './read-capped.ts';

export interface SourceResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of a 2xx answer; empty for any other status (never read). */
  bytes: Buffer;
  /** Where the answer came from, after redirects. */
  url: URL;
}

export interface GetOptions {
  /** What is fetched, for messages ("the repository index", "the chart"). */
  what: string;
  maxBytes: number;
  headers?: Record<string, string>;
  /** An Authorization header sent only to this origin, never to where it redirects (blob storage). */
  authorization?: { origin: string; value: string };
}

/** One fetch's HTTP: every request under one policy, one connection pool and one deadline. */
export interface SourceHttp {
  get(url: URL, options: GetOptions): Promise<SourceResponse>;
  close(): Promise<void>;
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function unreachable(what: string, reason: string, url: URL, cause?: unknown): SourceError {
  return new SourceError(
    'source_unreachable',
    `${what} could not be fetched from ${url.host}: ${reason}`,
    { host: url.hostname, reason },
    { cause },
  );
}

/** A refusal of ours travels inside undici's error (the connector's callback); find it. */
function ownRefusal(err: unknown): SourceError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (e instanceof SourceError) return e;
  }
  return undefined;
}

function failure(err: unknown, what: string, url: URL, deadline: AbortSignal): SourceError {
  const own = ownRefusal(err);
  if (own) return own;
  if (deadline.aborted) return unreachable(what, 'timed out', url, err);
  const code = (err as { code?: unknown }).code;
  return unreachable(what, typeof code === 'string' ? code : (err as Error).message, url, err);
}

function checkUrl(url: URL, policy: SourcePolicy, what: string): void {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SourceError('invalid_source', `${what}: only https (and http on allowed private networks) URLs are fetched`, {
      url: url.href,
    });
  }
  if (url.username || url.password) throw new SourceError('invalid_source', `${what}: URLs with credentials are not fetched`);
  assertHostAllowed(url, policy);
}

function headersFor(url: URL, options: GetOptions): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': 'brokkr-hub', ...options.headers };
  if (options.authorization && url.origin === options.authorization.origin) headers.authorization = options.authorization.value;
  return headers;
}

/**
 * GETs with redirects followed by hand (at most 5), so every hop is checked again: scheme, the
 * allowed hosts, and through the connector the address it lands on.
 */
interface Fetcher {
  dispatcher: Dispatcher;
  policy: SourcePolicy;
  deadline: AbortSignal;
}

async function follow({ dispatcher, policy, deadline }: Fetcher, start: URL, options: GetOptions): Promise<SourceResponse> {
  let url = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    checkUrl(url, policy, options.what);
    const res = await request(url, {
      dispatcher,
      method: 'GET',
      headers: headersFor(url, options),
      signal: deadline,
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
    }).catch((err: unknown) => {
      throw failure(err, options.what, url, deadline);
    });
    const location = res.headers.location;
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    if (!ok) await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
      url = new URL(location, url);
      continue;
    }
    if (!ok) return { status: res.statusCode, headers: res.headers, bytes: Buffer.alloc(0), url };
    const bytes = await readCapped(res.body, res.headers['content-length'], options.maxBytes, options.what).catch((err: unknown) => {
      throw failure(err, options.what, url, deadline);
    });
    return { status: res.statusCode, headers: res.headers, bytes, url };
  }
  throw unreachable(options.what, `more than ${MAX_REDIRECTS} redirects`, start);
}

export function createSourceHttp(policy: SourcePolicy): SourceHttp {
  const agent = new Agent({ connect: sourceConnector(policy), connections: 2 });
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  return {
    get: (url, options) => follow({ dispatcher: agent, policy, deadline }, url, options),
    close: () => agent.destroy(),
  };
}

/** A non-2xx answer as the error to throw: 404 is "not found", anything else "unreachable". */
export function statusError(res: SourceResponse, what: string, details: Record<string, unknown> = {}): SourceError {
  if (res.status === 404) return new SourceError('source_not_found', `${what} was not found (404 from ${res.url.host})`, details);
  return unreachable(what, `HTTP ${res.status}`, res.url);
}
