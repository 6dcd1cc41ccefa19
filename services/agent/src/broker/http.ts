import { Agent, request, type Dispatcher } from 'undici';

/** A broker answer outside 2xx/304, or no answer at all (status 0). */
export class BrokerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BrokerError';
  }

  /** Worth retrying later: no answer, throttled, or a server-side failure. */
  get transient(): boolean {
    return this.status === 0 || this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

export interface BrokerResponse<T> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Statuses returned to the caller instead of thrown (e.g. 304). */
  accept?: number[];
}

/** Minimal JSON-over-HTTP transport with one keep-alive pool per broker. */
export class BrokerHttp {
  private readonly dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 8 });

  constructor(
    readonly baseUrl: string,
    private readonly pak: string,
  ) {}

  async call<T>(method: Dispatcher.HttpMethod, path: string, options: CallOptions = {}): Promise<BrokerResponse<T>> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const headers: Record<string, string> = { authorization: `Bearer ${this.pak}`, accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: options.body === undefined ? null : JSON.stringify(options.body),
        dispatcher: this.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      throw new BrokerError(0, undefined, `${method} ${path}: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.body.text();
    const ok = (res.statusCode >= 200 && res.statusCode < 300) || options.accept?.includes(res.statusCode);
    if (!ok) throw brokerError(method, path, res.statusCode, text);
    return { status: res.statusCode, body: jsonBody(text, res.headers['content-type']) as T, headers: res.headers };
  }

  /** An unauthenticated GET of a root path (/readyz), true on 2xx. */
  async probe(path: string, timeoutMs = 5000): Promise<boolean> {
    try {
      const res = await request(`${this.baseUrl}${path}`, {
        dispatcher: this.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/** Some answers have an empty or plain-text body (204, Brokkr's 200 on PATCH health-status). */
function jsonBody(text: string, contentType: unknown): unknown {
  return text && String(contentType ?? '').includes('json') ? JSON.parse(text) : undefined;
}

function brokerError(method: string, path: string, status: number, text: string): BrokerError {
  let code: string | undefined;
  let message = text.slice(0, 300);
  try {
    const body = JSON.parse(text) as { code?: string; message?: string };
    code = body.code;
    message = body.message ?? message;
  } catch {
    // Brokkr answers some errors with plain text or an empty body.
  }
  return new BrokerError(status, code, `${method} ${path} → ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`);
}
