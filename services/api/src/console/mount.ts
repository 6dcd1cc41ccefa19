import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { ApiContext } from '../context.ts';
import { identityOf } from '../http/authenticate.ts';
import { endpointLabel } from '../http/request-metrics.ts';
import { consoleApiRouter } from './console-route.ts';
import { createLiveEvents, type LiveEvents } from './live-events.ts';
import { consoleReadRoutes } from './read-routes.ts';
import { CONSOLE_DIR, consolePage, VENDOR_FILES } from './static-files.ts';

export const CONSOLE_PREFIX = '/ui';

/**
 * The operator console under /ui:
 *   /ui                the page (sign-in with a PAK; the PAK stays in the tab's sessionStorage)
 *   /ui/app/…          its ES modules and stylesheet (services/api/console/)
 *   /ui/vendor/…       preact, preact/hooks, htm from node_modules
 *   /ui/api/…          paged read views the v1 API has no scalable form of (read-routes.ts)
 *   /ui/events         server-sent events: hints to re-read, fed by NATS (live-events.ts)
 * Everything with data needs a PAK in `Authorization`, exactly like /api/v1; the static files
 * hold none. Everything else the console shows comes from /api/v1 itself, so its 403s decide.
 */
export function mountConsole(app: Express, ctx: ApiContext, auth: RequestHandler): LiveEvents {
  const page = consolePage();
  const live = createLiveEvents({
    nc: ctx.bus.nc,
    db: ctx.db.pool,
    auth: ctx.auth,
    logger: ctx.logger,
    shutdownSignal: ctx.shutdownSignal,
    openStreams: ctx.metrics.consoleStreams,
    streams: ctx.streams,
  });
  const sendPage = (_req: Request, res: Response) =>
    void res
      .set({ 'Content-Security-Policy': page.csp, 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' })
      .type('html')
      .send(page.html);

  app.get([CONSOLE_PREFIX, `${CONSOLE_PREFIX}/`], endpointLabel(CONSOLE_PREFIX), sendPage);
  app.use(
    `${CONSOLE_PREFIX}/app`,
    endpointLabel(`${CONSOLE_PREFIX}/app`),
    express.static(CONSOLE_DIR, {
      index: false,
      fallthrough: true,
      maxAge: '5m',
      setHeaders: (res) => res.set('X-Content-Type-Options', 'nosniff'),
    }),
  );
  app.get(`${CONSOLE_PREFIX}/vendor/:file`, endpointLabel(`${CONSOLE_PREFIX}/vendor`), (req: Request, res: Response, next) => {
    const file = VENDOR_FILES[String(req.params.file)];
    if (!file) return next();
    res.sendFile(file, { maxAge: '1h', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } });
  });
  app.get(`${CONSOLE_PREFIX}/events`, endpointLabel(`${CONSOLE_PREFIX}/events`), auth, (req: Request, res: Response) =>
    live.stream(req, res, identityOf(res)),
  );
  app.use(`${CONSOLE_PREFIX}/api`, consoleApiRouter(`${CONSOLE_PREFIX}/api`, consoleReadRoutes, ctx, auth));
  return live;
}
