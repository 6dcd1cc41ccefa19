import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { z } from 'zod';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import { identityOf } from '../http/authenticate.ts';
import { endpointLabel } from '../http/request-metrics.ts';
import { validatePart } from '../http/validate.ts';

export interface ConsoleRouteInput<P, Q> {
  params: P;
  query: Q;
  identity: Identity;
  ctx: ApiContext;
}

/** A read-only console endpoint (GET, JSON). Errors are thrown as ApiError like in /api/v1. */
export interface ConsoleRoute {
  /** Express path relative to the console API prefix. */
  path: string;
  params?: z.ZodType;
  query?: z.ZodType;
  handler(input: ConsoleRouteInput<unknown, unknown>): Promise<unknown>;
}

type EmptyObject = z.ZodObject<Record<string, never>>;

/** Infers the handler's input types from the schemas (like defineRoute for /api/v1). */
export function defineConsoleRoute<P extends z.ZodType = EmptyObject, Q extends z.ZodType = EmptyObject>(route: {
  path: string;
  params?: P;
  query?: Q;
  handler(input: ConsoleRouteInput<z.output<P>, z.output<Q>>): Promise<unknown>;
}): ConsoleRoute {
  return route as ConsoleRoute;
}

/**
 * Mounts the routes on a router of their own: endpoint label for metrics → authentication (the
 * same PAK check as /api/v1, so a rejected PAK is a 401 here too) → validation → handler.
 */
export function consoleApiRouter(prefix: string, routes: readonly ConsoleRoute[], ctx: ApiContext, auth: RequestHandler): Router {
  const router = express.Router({ strict: true, caseSensitive: true });
  for (const route of routes) {
    router.get(route.path, endpointLabel(prefix + route.path), auth, async (req: Request, res: Response) => {
      const identity = identityOf(res);
      const params = route.params ? validatePart('params', route.params, req.params) : {};
      const query = route.query ? validatePart('query', route.query, req.query) : {};
      const body = await route.handler({ params, query, identity, ctx });
      res.set('Cache-Control', 'no-store').json(body);
    });
  }
  return router;
}
