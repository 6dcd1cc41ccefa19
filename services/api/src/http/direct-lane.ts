import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { Request, Response } from 'express';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import { errorReply } from './error-handler.ts';
import { closeAfterAnswer } from './lingering-close.ts';
import { API_PREFIX, noResponse, runRoute } from './mount-routes.ts';
import { payloadTooLarge, readBodyWithin } from './read-body.ts';
import { observeRequest } from './request-metrics.ts';
import type { AnyRoute, Reply } from './route.ts';
import { takesBody } from './route-errors.ts';

/** Takes the request (true) or leaves it to express (false, nothing touched). */
export type DirectLane = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Resolves the caller's PAK, or throws the 401 (recording the failure). */
export type ResolveIdentity = (req: IncomingMessage, path: string) => Promise<Identity>;

interface LaneRoute {
  route: AnyRoute;
  /** Path segments after the prefix; null where the template has a `:param`. */
  segments: (string | null)[];
  /** Parameter name per segment (undefined for literal segments). */
  names: (string | undefined)[];
  /** The metrics label, as express's markEndpoint sets it. */
  endpoint: string;
}

function compile(route: AnyRoute): LaneRoute {
  const parts = route.path.split('/');
  return {
    route,
    segments: parts.map((p) => (p.startsWith(':') ? null : p)),
    names: parts.map((p) => (p.startsWith(':') ? p.slice(1) : undefined)),
    endpoint: API_PREFIX + route.path,
  };
}

/** Exact, case-sensitive, strict (trailing slash significant) like the express router; a param is one non-empty segment. */
function match(lane: LaneRoute, parts: string[]): Record<string, string> | undefined {
  if (parts.length !== lane.segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const literal = lane.segments[i];
    const part = parts[i]!;
    if (literal === null) {
      if (part === '') return undefined;
      params[lane.names[i]!] = part;
    } else if (literal !== part) return undefined;
  }
  return params;
}

function writeJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** What express's res.json / res.send would write for a Reply, minus the ETag (these are writes). */
function sendReply(res: ServerResponse, reply: Reply): void {
  if (reply.body === undefined) {
    if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
    res.statusCode = reply.status;
    res.end();
    return;
  }
  if (!reply.contentType) return writeJson(res, reply.status, reply.body, reply.headers);
  if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  const bytes = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : (reply.body as Buffer);
  res.statusCode = reply.status;
  res.setHeader('Content-Type', typeof reply.body === 'string' ? `${reply.contentType}; charset=utf-8` : reply.contentType);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

function readBody(req: IncomingMessage, res: ServerResponse, limitBytes: number): Promise<void> {
  return new Promise((resolve, reject) =>
    readBodyWithin(limitBytes)(req as Request, res as Response, (err?: unknown) => (err ? reject(err) : resolve())),
  );
}

/**
 * The hot agent and generator writes (routes marked `direct`) served straight from node's
 * request event, without express: its router walks every registered layer per request and
 * res.json hashes each body for an ETag, together about a sixth of the api's CPU per write
 * (bench:api profile, ADR 0028). The lane does what the express chain does for these routes —
 * metrics label, the body-size check, authentication, body read, then runRoute (admin check,
 * validation, handler) and the same error replies — and leaves to express every request it is
 * not sure about: another method or path, an encoded path, a CORS request (Origin), and
 * everything while tracing is on (spans are express middleware). Handlers get node's req/res
 * with the few express fields the route layer reads (`params`, `query`, `body`, `locals`).
 */
export function createDirectLane(ctx: ApiContext, routes: readonly AnyRoute[], resolveIdentity: ResolveIdentity): DirectLane {
  const byMethod = new Map<string, LaneRoute[]>();
  for (const route of routes) {
    if (!route.direct) continue;
    const method = route.method.toUpperCase();
    byMethod.set(method, [...(byMethod.get(method) ?? []), compile(route)]);
  }
  const limitBytes = ctx.settings.http.bodyLimitBytes;

  async function serve(
    lane: LaneRoute,
    target: { params: Record<string, string>; search: string; path: string },
    req: IncomingMessage,
    res: ServerResponse,
  ) {
    const { params, search, path } = target;
    const started = process.hrtime.bigint();
    const locals: Record<string, unknown> = { endpoint: lane.endpoint };
    Object.assign(req, { params, query: querystring.parse(search), body: undefined });
    Object.assign(res, { locals });
    res.once('finish', () =>
      observeRequest(ctx.metrics, { endpoint: lane.endpoint, method: req.method ?? '', status: res.statusCode, started }),
    );
    try {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > limitBytes) {
        closeAfterAnswer(res);
        throw payloadTooLarge({ limit_bytes: limitBytes, content_length: declared });
      }
      const identity = await resolveIdentity(req, path);
      locals.identity = identity;
      if (takesBody(lane.route)) await readBody(req, res, limitBytes);
      const reply = await runRoute(lane.route, ctx, { req: req as Request, res: res as Response, identity });
      if (reply) sendReply(res, reply);
      else if (!res.headersSent) throw noResponse(lane.route);
    } catch (err) {
      const reply = errorReply(err, ctx.logger, req.method, path);
      if (res.headersSent) res.end();
      else writeJson(res, reply.status, reply.body, reply.headers);
    }
  }

  if (ctx.settings.telemetry.enabled || byMethod.size === 0) return () => false;
  return (req, res) => {
    const url = req.url ?? '';
    const lanes = byMethod.get(req.method ?? '');
    if (!lanes || !url.startsWith(`${API_PREFIX}/`) || req.headers.origin !== undefined) return false;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path.includes('%')) return false;
    const parts = path.slice(API_PREFIX.length).split('/');
    for (const lane of lanes) {
      const params = match(lane, parts);
      if (!params) continue;
      serve(lane, { params, search: q < 0 ? '' : url.slice(q + 1), path }, req, res).catch((err: unknown) =>
        ctx.logger.error({ err, path }, 'direct lane: answering failed'),
      );
      return true;
    }
    return false;
  };
}
