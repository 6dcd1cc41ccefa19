import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { createReadiness, pgCheck, type ReadinessResult } from '@brokkr/health';
import { createFailedAuthAudit } from './audit/failed-auth-audit.ts';
import type { ApiContext } from './context.ts';
import { createExpositions, type Exposition } from './metrics/expositions.ts';
import { authenticate, type OnFailedAuth } from './http/authenticate.ts';
import { proxyTrust, userAgent } from './auth/client-info.ts';
import { rejectOversizedBody } from './http/body-limit.ts';
import { cors } from './http/cors.ts';
import { mountApiDocs } from './http/docs-page.ts';
import { mountConsole } from './console/mount.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import { API_PREFIX } from './http/mount-routes.ts';
import { apiRouter } from './http/router.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import { endpointLabel, requestMetrics } from './http/request-metrics.ts';
import { serverSpans } from './http/tracing.ts';
import type { AnyRoute } from './http/route.ts';

export interface AppOptions {
  routes: readonly AnyRoute[];
  /** Answers plain (non-upgrade) requests to the WebSocket paths (live/upgrade-router.ts). */
  webSocketPaths?: RequestHandler;
  version?: string;
}

export interface ApiApp {
  app: Express;
  /** The metrics port's /metrics (start.ts serves it when BROKKR__BROKER__METRICS_PORT is set). */
  allMetrics: Exposition;
  /** Flushes pending summaries (suppressed auth-failure audits) at shutdown. */
  close(): void;
}

/** `Ready`, or which dependency is missing (`database unavailable`). */
function readinessText(result: ReadinessResult): string {
  return result.ok ? 'Ready' : `${Object.keys(result.failed).join(', ')} unavailable`;
}

function mountRoot(app: Express, ctx: ApiContext, publicMetrics: Exposition, openapi: () => object): void {
  // Brokkr's rule: Postgres answers `SELECT 1` within 750 ms; the verdict is reused for 2 s so a
  // probe storm never becomes a query storm. NATS is not a condition: without it writes still
  // commit (the outbox and the audit fallback catch up).
  const readiness = createReadiness({ database: pgCheck(ctx.db.pool) }, { timeoutMs: 750, cacheMs: 2000 });
  app.get('/healthz', endpointLabel('/healthz'), (_req, res) => void res.type('text/plain').send('OK'));
  app.get('/readyz', endpointLabel('/readyz'), async (_req, res) => {
    const result = await readiness();
    res
      .status(result.ok ? 200 : 503)
      .type('text/plain')
      .send(readinessText(result));
  });
  app.get('/metrics', endpointLabel('/metrics'), async (_req, res) => {
    res.set('Content-Type', publicMetrics.contentType).send(await publicMetrics.metrics());
  });
  mountApiDocs(app, openapi);
}

/** The express application: root probes and docs, `/api/v1` routes, JSON errors everywhere. */
export function createApp(ctx: ApiContext, options: AppOptions): ApiApp {
  const app = express();
  app.disable('x-powered-by');
  // Brokkr sends no ETags; answers that have one set it themselves (target state). express would
  // hash every JSON body for one.
  app.set('etag', false);
  // req.ip / req.protocol follow the same trusted proxies as the audited client address.
  const trusted = proxyTrust(ctx.settings.http.proxyTrust);
  app.set('trust proxy', (address: string) => trusted(address));
  app.use(requestMetrics(ctx.metrics));
  if (ctx.settings.telemetry.enabled) app.use(serverSpans());
  app.use(rejectOversizedBody(ctx.settings.http.bodyLimitBytes));
  const expositions = createExpositions(ctx.db.pool, ctx.metrics, ctx.logger);
  mountRoot(app, ctx, expositions.public, () => buildOpenApiDocument(options.routes, options.version ?? '0.1.0'));
  if (options.webSocketPaths) app.use(options.webSocketPaths);

  const failedAuth = createFailedAuthAudit({ audit: ctx.audit, logger: ctx.logger, suppressed: ctx.metrics.authFailedAuditSuppressed });
  const onFailedAuth: OnFailedAuth = (req, path) =>
    failedAuth.record({ path, ipAddress: ctx.clientAddress(req), userAgent: userAgent(req) });
  const auth = authenticate(ctx.auth, onFailedAuth);
  const v1 = express.Router({ strict: true, caseSensitive: true });
  v1.use(cors(ctx.settings.cors));
  v1.use(apiRouter(options.routes, ctx, auth));
  // Unknown paths under /api/v1 still require a PAK first (as in Brokkr, whose auth layer wraps the fallback).
  v1.use(auth, notFoundHandler());
  app.use(API_PREFIX, v1);
  const liveConsole = mountConsole(app, ctx, auth);
  app.use('/api', notFoundHandler());
  app.use(
    (req: Request, res: Response) => void res.status(404).json({ code: 'not_found', message: `No route for ${req.method} ${req.path}` }),
  );
  app.use(errorHandler(ctx.logger));
  return {
    app,
    allMetrics: expositions.all,
    close: () => {
      failedAuth.flush();
      liveConsole.close();
    },
  };
}
