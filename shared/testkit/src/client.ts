/** Response bodies are whatever the server sent; tests assert on their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJson = any;

export interface ClientResponse<T = AnyJson> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else undefined (see `text`). */
  body: T;
  /** The body as received. */
  text: string;
}

export interface RequestOptions {
  /** JSON body (serialized, `Content-Type: application/json` unless `contentType` says otherwise). */
  json?: unknown;
  /** Raw body sent as is (set `contentType` yourself). */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Overrides the client's PAK; `null` sends no Authorization header. */
  pak?: string | null;
  /** Query parameters appended to the path (undefined ones left out). */
  query?: Record<string, string | number | boolean | undefined>;
}

function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

function buildBody(options: RequestOptions, headers: Record<string, string>): string | Uint8Array | undefined {
  if (options.json !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/json';
    return JSON.stringify(options.json);
  }
  if (options.raw !== undefined) {
    if (options.contentType) headers['content-type'] = options.contentType;
    return typeof options.raw === 'string' ? options.raw : new Uint8Array(options.raw);
  }
  return undefined;
}

/**
 * The one HTTP client of black-box tests and benchmarks: JSON in, parsed JSON (and the text) out,
 * `Authorization: Bearer <pak>`; it never throws on a status (`must` does).
 */
export class TestClient {
  constructor(
    /** e.g. http://127.0.0.1:1234 (no trailing slash) */
    readonly baseUrl: string,
    readonly pak: string | null = null,
    /** Prepended to every path that does not start with `//`. */
    readonly prefix = '/api/v1',
  ) {}

  /** The same server with another PAK (or none). */
  as(pak: string | null): TestClient {
    return new TestClient(this.baseUrl, pak, this.prefix);
  }

  /** `path` is relative to the prefix (/api/v1) unless it starts with `//`: then to the root, e.g. `//healthz`. */
  async request<T = AnyJson>(method: string, path: string, options: RequestOptions = {}): Promise<ClientResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const pak = options.pak === undefined ? this.pak : options.pak;
    if (pak !== null) headers.authorization = `Bearer ${pak}`;
    const body = buildBody(options, headers);
    const url = this.baseUrl + (path.startsWith('//') ? path.slice(1) : `${this.prefix}${path}`);
    const res = await fetch(withQuery(url, options.query), { method, headers, body });
    const text = await res.text();
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    return { status: res.status, headers: res.headers, text, body: (isJson && text ? JSON.parse(text) : undefined) as T };
  }

  get<T = AnyJson>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = AnyJson>(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, json === undefined ? options : { ...options, json });
  }
  put<T = AnyJson>(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PUT', path, json === undefined ? options : { ...options, json });
  }
  patch<T = AnyJson>(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, json === undefined ? options : { ...options, json });
  }
  delete<T = AnyJson>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  /** For set-up steps that must work: the body of a 2xx answer, else an error naming the call and the answer. */
  async must<T = AnyJson>(method: string, path: string, json?: unknown): Promise<T> {
    const res = await this.request<T>(method, path, json === undefined ? {} : { json });
    if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${res.text}`);
    return res.body;
  }
}
