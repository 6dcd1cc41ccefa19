import type https from 'node:https';
import { Agent, request, type Dispatcher } from 'undici';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './errors.ts';
import { DEFAULT_RETRY, withRetries, type RetryPolicy } from './retry.ts';

export interface KubeRequest {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
  /** Retries for 429/5xx; false for calls whose caller handles failure itself (probes). */
  retry?: RetryPolicy | false;
  /** 'text': the body as a string (pod logs), not parsed as JSON. */
  responseType?: 'json' | 'text';
}

const HEADER_TTL_MS = 30_000;

/**
 * Raw JSON access to the Kubernetes API. The kubeconfig (client-node's KubeConfig) supplies the
 * server, TLS material and credentials; requests are our own undici calls so that objects go over
 * the wire exactly as written (client-node's serializer drops fields it has no model for).
 */
export class KubeClient {
  private headerCache: { at: number; headers: Record<string, string> } | undefined;

  private constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly dispatcher: Dispatcher,
    /** Long-lived streams (followed logs) get connections of their own, never the bounded pool requests share. */
    private readonly streams: Dispatcher,
    readonly server: string,
  ) {}

  static async create(kubeConfig: KubeConfig, connections = 16): Promise<KubeClient> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const opts: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(opts);
    const connect = {
      ...(opts.ca ? { ca: opts.ca as string | Buffer } : {}),
      ...(opts.cert ? { cert: opts.cert as string | Buffer } : {}),
      ...(opts.key ? { key: opts.key as string | Buffer } : {}),
      ...(opts.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      ...(opts.servername ? { servername: opts.servername } : {}),
    };
    const dispatcher = new Agent({ connect, connections, keepAliveTimeout: 30_000 });
    const streams = new Agent({ connect, keepAliveTimeout: 30_000 });
    return new KubeClient(kubeConfig, dispatcher, streams, cluster.server.replace(/\/+$/, ''));
  }

  /** Credentials are re-read now and then: in-cluster service-account tokens rotate. */
  private async headers(): Promise<Record<string, string>> {
    if (this.headerCache && Date.now() - this.headerCache.at < HEADER_TTL_MS) return this.headerCache.headers;
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = String(v);
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    this.headerCache = { at: Date.now(), headers };
    return headers;
  }

  async request<T>(method: Dispatcher.HttpMethod, path: string, req: KubeRequest = {}): Promise<T> {
    const once = () => this.once<T>(method, path, req);
    return req.retry === false ? once() : withRetries(once, req.retry ?? DEFAULT_RETRY);
  }

  private async once<T>(method: Dispatcher.HttpMethod, path: string, req: KubeRequest): Promise<T> {
    const headers: Record<string, string> = { ...(await this.headers()), accept: req.accept ?? 'application/json' };
    if (req.body !== undefined) headers['content-type'] = req.contentType ?? 'application/json';
    const timeoutMs = req.timeoutMs ?? 30_000;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${this.server}${path}${queryString(req.query)}`, {
        method,
        headers,
        body: req.body === undefined ? null : JSON.stringify(req.body),
        dispatcher: this.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      throw new KubeApiError(0, undefined, `${method} ${path}: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.body.text();
    if (res.statusCode >= 400) throw toError(`${method} ${path}`, res.statusCode, text, res.headers['retry-after']);
    if (req.responseType === 'text') return text as T;
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * A streamed GET (a followed pod log): the body's chunks as they come, until the server ends it
   * or `signal` aborts. An abort ends the iteration with an AbortError the caller's loop sees (and
   * closes the connection). No body timeout: a followed log may stay quiet for any length of time.
   */
  async *stream(path: string, query: Record<string, string | undefined>, signal: AbortSignal): AsyncGenerator<Buffer> {
    const call = `GET ${path}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${this.server}${path}${queryString(query)}`, {
        method: 'GET',
        headers: { ...(await this.headers()), accept: '*/*' },
        dispatcher: this.streams,
        signal,
        bodyTimeout: 0,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new KubeApiError(0, undefined, `${call}: ${(err as Error).message}`, { cause: err });
    }
    if (res.statusCode >= 400) throw toError(call, res.statusCode, await res.body.text(), res.headers['retry-after']);
    yield* res.body as AsyncIterable<Buffer>;
  }

  /** GET /version: the reachability probe (heartbeat, /readyz, start-up). */
  version(timeoutMs = 5000): Promise<{ gitVersion: string }> {
    return this.request('GET', '/version', { timeoutMs, retry: false });
  }

  /** Requests in flight finish; streams still open are cut (their readers see an error). */
  async close(): Promise<void> {
    await Promise.all([this.dispatcher.close(), this.streams.destroy()]);
  }
}

function queryString(query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  return params.size ? `?${params.toString()}` : '';
}

function toError(call: string, status: number, text: string, retryAfter: unknown): KubeApiError {
  let reason: string | undefined;
  let message = text.slice(0, 500);
  try {
    const body = JSON.parse(text) as { reason?: string; message?: string };
    reason = body.reason;
    message = body.message ?? message;
  } catch {
    // Not a Status object (a proxy in between, for instance): keep the raw text.
  }
  const seconds = typeof retryAfter === 'string' ? Number(retryAfter) : undefined;
  return new KubeApiError(status, reason, `${call} → ${status}${reason ? ` ${reason}` : ''}: ${message}`, {
    retryAfterSeconds: seconds && Number.isFinite(seconds) ? seconds : undefined,
  });
}
