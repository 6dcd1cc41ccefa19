import type { Request, RequestHandler, Response } from 'express';
import { adminRequired, errorBody } from '../errors/api-error.ts';
import { jsonBody, rawBody, readBody } from './body.ts';
import { userAgent } from '../auth/client-info.ts';
import type { AnyRoute, Reply } from './route.ts';
import { takesBody } from './route-errors.ts';
import { validatePart } from './validate.ts';
import { identityOf } from './authenticate.ts';
import { withRequestContext } from './tracing.ts';
import type { ApiContext } from '../context.ts';
import type { Identity } from '../auth/identity.ts';

export const API_PREFIX = '/api/v1';

/** Labels metrics with the route template, never the raw path (bounded cardinality). */
function markEndpoint(template: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.endpoint = template;
    next();
  };
}

function send(res: Response, reply: Reply): void {
  if (reply.headers) res.set(reply.headers);
  res.status(reply.status);
  if (reply.body === undefined) res.end();
  else if (reply.contentType) res.type(reply.contentType).send(reply.body);
  else res.json(reply.body);
}

function readInput(route: AnyRoute, req: Request) {
  const mode = route.bodyMode ?? 'json';
  const params = route.params ? validatePart('params', route.params, req.params) : {};
  const query = route.query ? validatePart('query', route.query, req.query) : {};
  let body: unknown;
  if (route.body && mode !== 'raw') body = validatePart('body', route.body, jsonBody(req, mode));
  return { params, query, body, raw: mode === 'raw' ? rawBody(req) : undefined };
}

/** Admin check, validation and the handler: what a route does once authenticated and its body read. */
export function runRoute(
  route: AnyRoute,
  ctx: ApiContext,
  { req, res, identity }: { req: Request; res: Response; identity: Identity },
): Promise<Reply | undefined> {
  if (route.access === 'admin' && !identity.admin) throw adminRequired();
  const input = readInput(route, req);
  // clientIp is a getter: the socket's address is a getpeername() call that most handlers never need.
  return withRequestContext(res, async () =>
    route.handler({
      ...input,
      identity,
      ctx,
      get clientIp() {
        return ctx.clientAddress(req);
      },
      userAgent: userAgent(req),
      req,
      res,
    }),
  );
}

/** A handler that answers nothing and writes nothing left the client hanging: our bug. */
export function noResponse(route: AnyRoute): Error {
  return new Error(`handler for ${route.method.toUpperCase()} ${route.path} sent no response`);
}

function handle(route: AnyRoute, ctx: ApiContext): RequestHandler {
  return async (req: Request, res: Response) => {
    const reply = await runRoute(route, ctx, { req, res, identity: identityOf(res) });
    if (reply) send(res, reply);
    else if (!res.headersSent) throw noResponse(route);
  };
}

/** A route's handlers, in the order express would have run them for it. */
export function routeChain(route: AnyRoute, ctx: ApiContext, authenticate: RequestHandler): RequestHandler[] {
  const chain: RequestHandler[] = [markEndpoint(API_PREFIX + route.path), authenticate];
  if (takesBody(route)) chain.push(readBody(ctx.settings.http.bodyLimitBytes));
  chain.push(handle(route, ctx));
  return chain;
}

/** 405 with `Allow`, after authentication (as Brokkr's auth layer wraps its fallback). */
export function methodNotAllowed(path: string, methods: readonly string[], authenticate: RequestHandler): RequestHandler[] {
  const allow = [...methods].sort().join(', ');
  return [
    markEndpoint(API_PREFIX + path),
    authenticate,
    (req: Request, res: Response) =>
      void res
        .set('Allow', allow)
        .status(405)
        .json(errorBody('method_not_allowed', `${req.method} is not allowed here`, { allow: [...methods] })),
  ];
}
