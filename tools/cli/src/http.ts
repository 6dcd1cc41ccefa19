import type { Connection } from './config.ts';
import { CliError, HubError } from './errors.ts';

/** One request's limit: a hub that stopped answering must not hang a CI job forever. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface RequestOptions {
  json?: unknown;
  /** A raw body with its content type (deployment objects go up as `application/yaml`). */
  raw?: { body: string; contentType: string };
  query?: Record<string, string | undefined>;
}

/**
 * The hub's REST API over fetch: `Authorization: Bearer <pak>`, JSON in and out. Any answer
 * outside 2xx becomes a HubError carrying the hub's `{code, message}` (or the status line when a
 * proxy answered with something else); a connection failure is a CliError naming the URL.
 */
export class Hub {
  constructor(private readonly connection: Pick<Connection, 'url' | 'pak'>) {}

  get url(): string {
    return this.connection.url;
  }

  /** The PAK in use (admin rotation repeats it in the body). */
  get pak(): string {
    return this.connection.pak;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.connection.url}/api/v1${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const headers: Record<string, string> = { authorization: `Bearer ${this.connection.pak}`, accept: 'application/json' };
    const res = await this.send(url, { method, headers, body: requestBody(options, headers) });
    const text = await res.text();
    if (!res.ok) throw toHubError(res, text);
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`the hub at ${this.connection.url} answered ${method} ${path} with something that is not JSON`);
    }
  }

  private async send(url: URL, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      if ((err as Error).name === 'TimeoutError')
        throw new CliError(
          `the hub at ${this.connection.url} did not answer ${init.method} ${url.pathname} within ${REQUEST_TIMEOUT_MS / 1000} s`,
        );
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach the hub at ${this.connection.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }

  get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  post<T>(path: string, json?: unknown): Promise<T> {
    return this.request<T>('POST', path, json === undefined ? {} : { json });
  }

  put<T>(path: string, json: unknown): Promise<T> {
    return this.request<T>('PUT', path, { json });
  }
}

/** The body to send, setting its content type in `headers`. */
function requestBody(options: RequestOptions, headers: Record<string, string>): string | undefined {
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    return JSON.stringify(options.json);
  }
  if (!options.raw) return undefined;
  headers['content-type'] = options.raw.contentType;
  return options.raw.body;
}

function toHubError(res: Response, text: string): HubError {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.code === 'string')
      return new HubError(res.status, body.code, typeof body.message === 'string' ? body.message : res.statusText);
  } catch {
    // not JSON: fall through
  }
  const fallback = res.status === 401 ? 'unauthorized' : `http_${res.status}`;
  return new HubError(res.status, fallback, text.trim().slice(0, 200) || res.statusText || `HTTP ${res.status}`);
}

/** True for the hub's "not found" answers (404 with any code). */
export const isNotFound = (err: unknown): boolean => err instanceof HubError && err.status === 404;
