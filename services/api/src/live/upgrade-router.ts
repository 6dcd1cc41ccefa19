import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler } from 'express';
import { WebSocketServer, type WebSocket } from 'ws';
import { hashPresentedPak, pakFromAuthorization } from '@brokkr/pak';
import { createFailedAuthAudit } from '../audit/failed-auth-audit.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import { closeSocket } from '../http/close-socket.ts';
import { RevocationIndex } from './revocation.ts';
import type { UpgradeRoute } from '../http/upgrade-route.ts';

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

/**
 * Serves the WebSocket endpoints on the api's HTTP server: match the path, authenticate the PAK
 * (Brokkr's order: 401 before any handshake check), hand the request to the route, and keep every
 * accepted socket in the revocation index.
 */
// eslint-disable-next-line max-lines-per-function -- one closure over the servers and sockets every upgrade shares; its split into named parts comes with the api restructuring
export function createUpgradeRouter(ctx: ApiContext, routes: readonly UpgradeRoute[]): UpgradeRouter {
  const compiled = routes.map(compile);
  // One server per message limit (a larger message closes the socket with 1009): `ws` sets the
  // limit per server. Brokkr uses the library defaults everywhere (64 MiB per message).
  const servers = new Map<number, WebSocketServer>();
  const serverFor = (route: UpgradeRoute): WebSocketServer => {
    const maxPayload = route.maxMessageBytes(ctx.settings);
    let wss = servers.get(maxPayload);
    if (!wss) {
      wss = new WebSocketServer({
        noServer: true,
        maxPayload,
        perMessageDeflate: false,
        clientTracking: true,
        handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
      });
      servers.set(maxPayload, wss);
    }
    return wss;
  };
  const revocation = new RevocationIndex(ctx.auth, ctx.logger);
  const failedAuth = createFailedAuthAudit({ audit: ctx.audit, logger: ctx.logger, suppressed: ctx.metrics.authFailedAuditSuppressed });

  const record = (endpoint: string, status: number, started: bigint): void => {
    ctx.metrics.httpRequests.inc({ endpoint, method: 'GET', status: String(status) });
    ctx.metrics.httpDuration.observe({ endpoint, method: 'GET' }, Number(process.hrtime.bigint() - started) / 1e9);
  };

  /** The identity of the presented credential, or undefined after answering/recording the failure. */
  async function authenticate(
    req: IncomingMessage,
    path: string,
    route: UpgradeRoute,
  ): Promise<{ identity: Identity; hash: string } | 'missing' | 'invalid'> {
    const credential = presentedCredential(req, route.subprotocolAuth);
    if (credential === undefined) return 'missing';
    const hash = PRINTABLE_ASCII.test(credential) ? hashPresentedPak(pakFromAuthorization(credential)) : undefined;
    const identity = hash === undefined ? undefined : await ctx.auth.resolveRequest(hash, req);
    if (!identity || hash === undefined) {
      // Brokkr records the full path here, prefix included.
      failedAuth.record({ path, ipAddress: ctx.clientAddress(req), userAgent: req.headers['user-agent'] ?? null });
      return 'invalid';
    }
    return { identity, hash };
  }

  async function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const started = process.hrtime.bigint();
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const found = match(compiled, path);
    if (!found) return writeRaw(socket, 404);
    const endpoint = found.route.endpoint ?? found.route.path;
    let answered = false;
    const reject = (status: number, body?: string): void => {
      if (answered) return;
      answered = true;
      record(endpoint, status, started);
      writeRaw(socket, status, body);
    };
    const rejectWith = (err: ApiError): void => {
      if (answered) return;
      answered = true;
      record(endpoint, err.status, started);
      writeRaw(socket, err.status, JSON.stringify(err.toJSON()), 'application/json');
    };
    let auth: Awaited<ReturnType<typeof authenticate>>;
    try {
      auth = await authenticate(req, path, found.route);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return rejectWith(err);
      throw err;
    }
    if (typeof auth === 'string') return reject(401);
    // Counted from here until the connection ends, whether the route accepts or refuses it.
    const release = ctx.streams.take('websocket', auth.identity);
    if (!release) return rejectWith(ctx.streams.refusal('websocket'));
    socket.once('close', release);
    const wss = serverFor(found.route);
    await found.route.handle({
      ctx,
      req,
      params: found.params,
      identity: auth.identity,
      pakHash: auth.hash,
      reject,
      accept: () =>
        new Promise<WebSocket>((resolve, rejectAccept) => {
          if (answered) return rejectAccept(new Error('upgrade already answered'));
          answered = true;
          if (socket.destroyed) return rejectAccept(new Error('client went away during the upgrade'));
          // ws itself answers a malformed handshake (400/405, plain text) and never calls back.
          wss.handleUpgrade(req, socket, head, (ws) => {
            record(endpoint, 101, started);
            revocation.add(auth.hash, ws);
            resolve(ws);
          });
        }),
    });
    if (!answered) reject(500);
  }

  const onServerUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    onUpgrade(req, socket, head).catch((err: unknown) => {
      ctx.logger.error({ err }, 'WebSocket upgrade failed');
      if (!socket.destroyed) writeRaw(socket, 500);
    });
  };

  const plainRequests: RequestHandler = (req, res, next) => {
    const found = match(compiled, req.path);
    if (!found) return next();
    res.locals.endpoint = found.route.endpoint ?? found.route.path;
    authenticate(req, req.originalUrl.split('?')[0]!, found.route).then(
      (auth) => {
        if (typeof auth === 'string') return void res.status(401).end();
        if (req.method !== 'GET') return void res.status(405).type('text/plain').send('Request method must be `GET`');
        res.status(400).type('text/plain').send("Connection header did not include 'upgrade'");
      },
      (err: unknown) => next(err),
    );
  };

  return {
    attach: (server) => void server.on('upgrade', onServerUpgrade),
    plainRequests,
    close() {
      revocation.close();
      failedAuth.flush();
      for (const wss of servers.values()) {
        for (const ws of wss.clients) closeSocket(ws);
        wss.close();
      }
    },
  };
}
