import { Agent, buildConnector, request } from 'undici';
import { assertLiteralHostAllowed, guardedLookup } from '@brokkr/crypto';

export interface WebhookHttpClientOptions {
  /** Skip the SSRF guard (tests, or receivers deliberately on the hub's own network). */
  allowPrivateNetworks: boolean;
  /** Sockets kept per origin; match the per-host concurrency. */
  connectionsPerOrigin: number;
}

export interface PostInput {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the request early (shutdown). */
  signal?: AbortSignal;
}

export interface PostResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The start of the body (for error messages); the rest is discarded. */
  bodyPrefix: string;
}

export interface WebhookHttpClient {
  post(input: PostInput): Promise<PostResponse>;
  close(): Promise<void>;
}

const BODY_PREFIX_BYTES = 1024;

async function readPrefix(body: AsyncIterable<Buffer> & { dump(opts?: { limit: number }): Promise<void> }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= BODY_PREFIX_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, BODY_PREFIX_BYTES).toString('utf8');
}

/**
 * One undici Agent per process (pooled keep-alive sockets per origin). The SSRF guard sits in the
 * connector, below every request: IP literals are checked before connecting and host names at
 * their DNS lookup, so the address checked is the address connected to. Redirects are not
 * followed (a 3xx is a failed attempt), so a receiver cannot bounce us onto an internal host.
 */
export function createWebhookHttpClient(options: WebhookHttpClientOptions): WebhookHttpClient {
  const base = buildConnector(options.allowPrivateNetworks ? {} : { lookup: guardedLookup });
  const connect: buildConnector.connector = (opts, callback) => {
    if (!options.allowPrivateNetworks) {
      try {
        assertLiteralHostAllowed(opts.hostname);
      } catch (err) {
        callback(err as Error, null);
        return;
      }
    }
    base(opts, callback);
  };
  const agent = new Agent({ connect, connections: options.connectionsPerOrigin, keepAliveTimeout: 30_000 });

  return {
    async post(input) {
      const res = await request(input.url, {
        method: 'POST',
        headers: input.headers,
        body: input.body,
        dispatcher: agent,
        headersTimeout: input.timeoutMs,
        bodyTimeout: input.timeoutMs,
        signal: input.signal ? AbortSignal.any([AbortSignal.timeout(input.timeoutMs), input.signal]) : AbortSignal.timeout(input.timeoutMs),
      });
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const bodyPrefix = ok ? '' : await readPrefix(res.body);
      // Drain what is left (bounded) so the socket can be reused; a huge body just closes it.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return { status: res.statusCode, headers: res.headers, bodyPrefix };
    },
    close: () => agent.close(),
  };
}
