import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiContext } from '../context.ts';
import { methodNotAllowed, routeChain } from './mount-routes.ts';
import type { AnyRoute } from './route.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** What the tree holds per route: its template (the 405's key) and its handlers. */
interface Found {
  path: string;
  chain: RequestHandler[];
}

/** Runs express handlers one after another, as a router would: `next()` moves on, `next(err)` and a rejection stop. */
function runChain(chain: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let at = 0;
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined && err !== 'route') return done(err);
    const handler = chain[at++];
    if (!handler) return done();
    try {
      const result = handler(req, res, next) as unknown;
      if (result instanceof Promise) result.catch(done);
    } catch (caught) {
      done(caught);
    }
  };
  next();
}

/**
 * The one way every `/api/v1` route is served: the route table compiled into one radix tree
 * (find-my-way, the router of Fastify) and found with one lookup, where express's router walked a
 * layer per route — with a hundred routes, most of a light request's routing cost. A path that
 * exists with other methods answers 405 with `Allow` (after authentication); any other path falls
 * through to the 404. Strict and case-sensitive like Brokkr's router: `/agents/` (search) is not
 * `/agents` (list).
 */
export function apiRouter(routes: readonly AnyRoute[], ctx: ApiContext, authenticate: RequestHandler): RequestHandler {
  // A path parameter as long as a request line may carry (express had no limit; a 100-character
  // default would turn a long label into a 404 instead of the route's own answer).
  const tree = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 16_384 });
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const method = route.method.toUpperCase() as HTTPMethod;
    const store: Found = { path: route.path, chain: routeChain(route, ctx, authenticate) };
    tree.on(method, route.path, () => undefined, store);
    const methods = methodsByPath.get(route.path) ?? new Set<string>();
    methods.add(method);
    if (method === 'GET') methods.add('HEAD');
    methodsByPath.set(route.path, methods);
  }
  const refusals = new Map([...methodsByPath].map(([path, methods]) => [path, methodNotAllowed(path, [...methods], authenticate)]));
  return (req, res, next) => {
    const found = tree.find(req.method as HTTPMethod, req.path);
    if (found) {
      req.params = found.params as Record<string, string>;
      return runChain((found.store as Found).chain, req, res, next);
    }
    // A preflight that cors() did not answer, and an unknown path, go on to the 404.
    const other = req.method === 'OPTIONS' ? undefined : METHODS.map((m) => tree.find(m, req.path)).find((f) => f !== null);
    if (!other) return next();
    runChain(refusals.get((other.store as Found).path)!, req, res, next);
  };
}
