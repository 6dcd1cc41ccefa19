import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** The request target as sent: path and query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body (UTF-8), unparsed, so signatures can be checked over the exact bytes. */
  body: string;
  /** The `webhook-id` header, '' when there is none. */
  webhookId: string;
  /** Date.now() when the whole body had arrived. */
  receivedAt: number;
}

export interface Reply {
  /** Default 200. */
  status?: number;
  /** e.g. `{ 'retry-after': '120' }` or `{ location: ... }`. */
  headers?: Record<string, string>;
  body?: string;
  /** Answer only after this long. */
  delayMs?: number;
  /** Never answer (the sender's timeout or shutdown must end the request); `close()` cuts it. */
  hang?: boolean;
}

/** Decides each reply; `nth` counts the requests with this webhook-id so far, from 1. */
export type Responder = (request: ReceivedRequest, nth: number) => Reply;

export interface WaitForOptions {
  /** Count only the requests this accepts. */
  where?: (request: ReceivedRequest) => boolean;
  /** Default 15 000. */
  timeoutMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  port: number;
  /** The receiver's URL with another path, e.g. one path per subscription. */
  urlFor(path: string): string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  /** Requests per webhook-id: what a receiver deduplicating on webhook-id sees. */
  readonly countById: ReadonlyMap<string, number>;
  /** Replaceable at any time; the default answers 200 with an empty body. */
  respond: Responder;
  /** The requests `where` accepts (all without it). */
  received(where?: (request: ReceivedRequest) => boolean): ReceivedRequest[];
  /** Resolves with the matching requests once at least `n` have arrived (at once if they already have). */
  waitFor(n: number, options?: WaitForOptions): Promise<ReceivedRequest[]>;
  /** Cuts hanging and delayed replies and stops listening. */
  close(): Promise<void>;
}

const DEFAULT_REPLY: Reply = { status: 200 };

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request (method, path,
 * headers, raw body) and answers what `respond` says, so tests can script failures, Retry-After,
 * redirects, slow and hanging receivers. `waitFor` is woken by each arrival (no polling).
 */
export async function startWebhookReceiver(respond: Responder = () => DEFAULT_REPLY): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const countById = new Map<string, number>();
  const waiters = new Set<Waiter>();
  const open = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();

  const received = (where?: (r: ReceivedRequest) => boolean) => (where ? requests.filter(where) : [...requests]);
  const answer = (res: ServerResponse, reply: Reply) => {
    open.delete(res);
    res.writeHead(reply.status ?? 200, reply.headers);
    res.end(reply.body ?? '');
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    open.add(res);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = toRecord(req, Buffer.concat(chunks).toString());
      const nth = (countById.get(request.webhookId) ?? 0) + 1;
      countById.set(request.webhookId, nth);
      requests.push(request);
      for (const waiter of [...waiters]) waiter.check();
      const reply = receiver.respond(request, nth);
      if (reply.hang) return;
      if (!reply.delayMs) return answer(res, reply);
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer(res, reply);
      }, reply.delayMs);
      timers.add(timer);
    });
  };

  const server: Server = createServer(onRequest);
  // Senders keep connections alive between deliveries; do not let the server cut them first.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    urlFor: (path) => `http://127.0.0.1:${port}${path.startsWith('/') ? path : `/${path}`}`,
    requests,
    countById,
    respond,
    received,
    waitFor: (n, options = {}) => waitForRequests(waiters, () => received(options.where), n, options),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const res of open) res.destroy();
        for (const waiter of [...waiters]) waiter.cancel();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

function toRecord(req: IncomingMessage, body: string): ReceivedRequest {
  return {
    method: req.method ?? '',
    path: req.url ?? '/',
    headers: req.headers,
    body,
    webhookId: String(req.headers['webhook-id'] ?? ''),
    receivedAt: Date.now(),
  };
}

interface Waiter {
  check(): void;
  cancel(): void;
}

function waitForRequests(
  waiters: Set<Waiter>,
  matching: () => ReceivedRequest[],
  n: number,
  options: WaitForOptions,
): Promise<ReceivedRequest[]> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    const what = options.what ?? `${n} request(s)`;
    const fail = (why: string) => {
      waiters.delete(waiter);
      clearTimeout(timer);
      reject(new Error(`${why} waiting for ${what}: ${matching().length} arrived`));
    };
    const waiter: Waiter = {
      check() {
        const got = matching();
        if (got.length < n) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        resolve(got);
      },
      cancel: () => fail('the receiver was closed'),
    };
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
    waiters.add(waiter);
    waiter.check();
  });
}
