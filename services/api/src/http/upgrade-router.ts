import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler } from 'express';
import { WebSocketServer, type WebSocket } from 'ws';
import { hashPresentedPak, pakFromAuthorization } from '@brokkr/pak';
import { createFailedAuthAudit } from '../audit/failed-auth-audit.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import type { ApiMetrics } from '../metrics/api-metrics.ts';
import { closeSocket } from '../sockets/close-socket.ts';
import { RevocationIndex } from './revocation.ts';
import type { UpgradeRoute } from './upgrade-route.ts';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const SUBPROTOCOL = 'brokkr.v1';
const PAK_SUBPROTOCOL_PREFIX = 'brokkr.pak.';

interface CompiledRoute {
  route: UpgradeRoute;
  pattern: RegExp;
  names: string[];
}

function compile(route: UpgradeRoute): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? (names.push(seg.slice(1)), '([^/]+)') : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return { route, pattern: new RegExp(`^${source}$`), names };
}

function match(routes: CompiledRoute[], path: string): { route: UpgradeRoute; params: Record<string, string> } | undefined {
  for (const c of routes) {
    const m = c.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    c.names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1]!)));
    return { route: c.route, params };
  }
  return undefined;
}

/** `Authorization`, else (consumer endpoints) the first `brokkr.pak.` entry of the first Sec-WebSocket-Protocol header. */
function presentedCredential(req: IncomingMessage, subprotocolAuth: boolean): string | undefined {
  if (req.headers.authorization !== undefined) return req.headers.authorization;
  if (!subprotocolAuth) return undefined;
  const offered = req.headersDistinct['sec-websocket-protocol']?.[0];
  const entry = offered
    ?.split(',')
    .map((p) => p.trim())
    .find((p) => p.startsWith(PAK_SUBPROTOCOL_PREFIX));
  return entry === undefined ? undefined : `Bearer ${entry.slice(PAK_SUBPROTOCOL_PREFIX.length)}`;
}

function writeRaw(socket: Duplex, status: number, body = '', contentType = 'text/plain; charset=utf-8'): void {
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`];
  if (body) head.push(`Content-Type: ${contentType}`);
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

export interface UpgradeRouter {
  /** Starts answering upgrades on the server. */
  attach(server: Server): void;
  /** For plain (non-upgrade) requests to a WebSocket path: authenticate, then 400 like Brokkr's extractor. */
  plainRequests: RequestHandler;
  /** Closes every socket (shutdown): each peer gets a Close frame. */
  close(): void;
}

type Authenticated = { identity: Identity; hash: string } | 'missing' | 'invalid';

/**
 * One upgrade request's answer, given once: a refusal written as raw HTTP, or the 101 of an
 * accepted handshake. Every answer is counted in the request metrics under the route's endpoint.
 */
class UpgradeAnswer {
  private answered = false;

  constructor(
    private readonly socket: Duplex,
    private readonly endpoint: string,
    private readonly started: bigint,
    private readonly metrics: Pick<ApiMetrics, 'httpRequests' | 'httpDuration'>,
  ) {}

  get given(): boolean {
    return this.answered;
  }

  /** Takes the right to answer: false when the request was answered already. */
  claim(): boolean {
    if (this.answered) return false;
    this.answered = true;
    return true;
  }

  readonly reject = (status: number, body?: string): void => {
    if (!this.claim()) return;
    this.record(status);
    writeRaw(this.socket, status, body);
  };

  rejectWith(err: ApiError): void {
    if (!this.claim()) return;
    this.record(err.status);
    writeRaw(this.socket, err.status, JSON.stringify(err.toJSON()), 'application/json');
  }

  record(status: number): void {
    const { endpoint, metrics } = this;
    metrics.httpRequests.inc({ endpoint, method: 'GET', status: String(status) });
    metrics.httpDuration.observe({ endpoint, method: 'GET' }, Number(process.hrtime.bigint() - this.started) / 1e9);
  }
}

/**
 * Serves the WebSocket endpoints on the api's HTTP server: match the path, authenticate the PAK
 * (Brokkr's order: 401 before any handshake check), hand the request to the route, and keep every
 * accepted socket in the revocation index.
 */
class WebSocketEndpoints implements UpgradeRouter {
  private readonly compiled: CompiledRoute[];
  // One server per message limit (a larger message closes the socket with 1009): `ws` sets the
  // limit per server. Brokkr uses the library defaults everywhere (64 MiB per message).
  private readonly servers = new Map<number, WebSocketServer>();
  private readonly revocation: RevocationIndex;
  private readonly failedAuth: ReturnType<typeof createFailedAuthAudit>;

  constructor(
    private readonly ctx: ApiContext,
    routes: readonly UpgradeRoute[],
  ) {
    this.compiled = routes.map(compile);
    this.revocation = new RevocationIndex(ctx.auth, ctx.logger);
    this.failedAuth = createFailedAuthAudit({ audit: ctx.audit, logger: ctx.logger, suppressed: ctx.metrics.authFailedAuditSuppressed });
  }

  attach(server: Server): void {
    server.on('upgrade', this.onServerUpgrade);
  }

  readonly plainRequests: RequestHandler = (req, res, next) => {
    const found = match(this.compiled, req.path);
    if (!found) return next();
    res.locals.endpoint = found.route.endpoint ?? found.route.path;
    this.authenticate(req, req.originalUrl.split('?')[0]!, found.route).then(
      (auth) => {
        if (typeof auth === 'string') return void res.status(401).end();
        if (req.method !== 'GET') return void res.status(405).type('text/plain').send('Request method must be `GET`');
        res.status(400).type('text/plain').send("Connection header did not include 'upgrade'");
      },
      (err: unknown) => next(err),
    );
  };

  close(): void {
    this.revocation.close();
    this.failedAuth.flush();
    for (const wss of this.servers.values()) {
      for (const ws of wss.clients) closeSocket(ws);
      wss.close();
    }
  }

  private readonly onServerUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.onUpgrade(req, socket, head).catch((err: unknown) => {
      this.ctx.logger.error({ err }, 'WebSocket upgrade failed');
      if (!socket.destroyed) writeRaw(socket, 500);
    });
  };

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const started = process.hrtime.bigint();
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const found = match(this.compiled, path);
    if (!found) return writeRaw(socket, 404);
    const answer = new UpgradeAnswer(socket, found.route.endpoint ?? found.route.path, started, this.ctx.metrics);
    let auth: Authenticated;
    try {
      auth = await this.authenticate(req, path, found.route);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return answer.rejectWith(err);
      throw err;
    }
    if (typeof auth === 'string') return answer.reject(401);
    // Counted from here until the connection ends, whether the route accepts or refuses it.
    const release = this.ctx.streams.take('websocket', auth.identity);
    if (!release) return answer.rejectWith(this.ctx.streams.refusal('websocket'));
    socket.once('close', release);
    const wss = this.serverFor(found.route);
    const { hash } = auth;
    await found.route.handle({
      ctx: this.ctx,
      req,
      params: found.params,
      identity: auth.identity,
      pakHash: hash,
      reject: answer.reject,
      accept: () => this.handshake(answer, wss, { req, socket, head, pakHash: hash }),
    });
    if (!answer.given) answer.reject(500);
  }

  /** Completes the handshake the route accepted; the socket is then watched for its PAK's revocation. */
  private handshake(
    answer: UpgradeAnswer,
    wss: WebSocketServer,
    upgrade: { req: IncomingMessage; socket: Duplex; head: Buffer; pakHash: string },
  ): Promise<WebSocket> {
    return new Promise<WebSocket>((resolve, rejectAccept) => {
      if (!answer.claim()) return rejectAccept(new Error('upgrade already answered'));
      if (upgrade.socket.destroyed) return rejectAccept(new Error('client went away during the upgrade'));
      // ws itself answers a malformed handshake (400/405, plain text) and never calls back.
      wss.handleUpgrade(upgrade.req, upgrade.socket, upgrade.head, (ws) => {
        answer.record(101);
        this.revocation.add(upgrade.pakHash, ws);
        resolve(ws);
      });
    });
  }

  private serverFor(route: UpgradeRoute): WebSocketServer {
    const maxPayload = route.maxMessageBytes(this.ctx.settings);
    let wss = this.servers.get(maxPayload);
    if (!wss) {
      wss = new WebSocketServer({
        noServer: true,
        maxPayload,
        perMessageDeflate: false,
        clientTracking: true,
        handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
      });
      this.servers.set(maxPayload, wss);
    }
    return wss;
  }

  /** The identity of the presented credential, or why there is none (a failure is recorded for the audit). */
  private async authenticate(req: IncomingMessage, path: string, route: UpgradeRoute): Promise<Authenticated> {
    const credential = presentedCredential(req, route.subprotocolAuth);
    if (credential === undefined) return 'missing';
    const hash = PRINTABLE_ASCII.test(credential) ? hashPresentedPak(pakFromAuthorization(credential)) : undefined;
    const identity = hash === undefined ? undefined : await this.ctx.auth.resolveRequest(hash, req);
    if (!identity || hash === undefined) {
      // Brokkr records the full path here, prefix included.
      this.failedAuth.record({ path, ipAddress: this.ctx.clientAddress(req), userAgent: req.headers['user-agent'] ?? null });
      return 'invalid';
    }
    return { identity, hash };
  }
}

/** The WebSocket endpoints of this process, served by `routes`. */
export function createUpgradeRouter(ctx: ApiContext, routes: readonly UpgradeRoute[]): UpgradeRouter {
  return new WebSocketEndpoints(ctx, routes);
}
