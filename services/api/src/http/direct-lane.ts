import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { Request, Response } from 'express';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import { errorReply } from './error-handler.ts';
import { oversizedBody } from './body-limit.ts';
import { API_PREFIX, noResponse, runRoute } from './mount-routes.ts';
import { readBodyWithin } from './read-body.ts';
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

/** Headers, status and body (already serialised) with its length; no ETag (these are writes). */
function writeReply(
  res: ServerResponse,
  status: number,
  headers: Record<string, string> | undefined,
  body?: { bytes: string | Buffer; type: string },
) {
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.statusCode = status;
  if (!body) return void res.end();
  res.setHeader('Content-Type', body.type);
  res.setHeader('Content-Length', typeof body.bytes === 'string' ? Buffer.byteLength(body.bytes) : body.bytes.length);
  res.end(body.bytes);
}

const jsonBody = (value: unknown) => ({ bytes: JSON.stringify(value), type: 'application/json; charset=utf-8' });

/** What express's res.json / res.send would write for a Reply (a string body gets `charset=utf-8`, as there). */
function sendReply(res: ServerResponse, reply: Reply): void {
  const { body, contentType } = reply;
  if (body === undefined) return writeReply(res, reply.status, reply.headers);
  if (!contentType) return writeReply(res, reply.status, reply.headers, jsonBody(body));
  const raw =
    typeof body === 'string' ? { bytes: body, type: `${contentType}; charset=utf-8` } : { bytes: body as Buffer, type: contentType };
  writeReply(res, reply.status, reply.headers, raw);
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
      const tooLarge = oversizedBody(req, res, limitBytes);
      if (tooLarge) throw tooLarge;
      const identity = await resolveIdentity(req, path);
      locals.identity = identity;
      if (takesBody(lane.route)) await readBody(req, res, limitBytes);
      const reply = await runRoute(lane.route, ctx, { req: req as Request, res: res as Response, identity });
      if (reply) sendReply(res, reply);
      else if (!res.headersSent) throw noResponse(lane.route);
    } catch (err) {
      const reply = errorReply(err, ctx.logger, req.method, path);
      if (res.headersSent) res.end();
      else writeReply(res, reply.status, reply.headers, jsonBody(reply.body));
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
