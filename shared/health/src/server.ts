import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '@brokkr/logger';
import { createReadiness, type ReadinessCheck, type ReadinessResult } from './readiness.ts';

export interface HealthServerSettings {
  /** 0 picks a free port; the real one is reported back. */
  port: number;
  host?: string;
  /** What /metrics serves: a registry, or anything that writes an exposition the same way. */
  registry: Pick<Registry, 'contentType' | 'metrics'>;
  /** Named dependency checks, e.g. `{ postgres: pgCheck(pool), nats: natsCheck(nc) }`. */
  checks: Record<string, ReadinessCheck>;
  logger: Logger;
  checkTimeoutMs?: number;
  cacheMs?: number;
  /** While this returns true, /readyz answers 503 so the load balancer stops sending work. */
  isShuttingDown?: () => boolean;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

type Reply = { status: number; type: string; body: string };

const text = (status: number, body: string): Reply => ({ status, type: 'text/plain; charset=utf-8', body });

function readinessReply(result: ReadinessResult): Reply {
  if (result.ok) return text(200, 'Ready');
  return text(503, `${Object.keys(result.failed).join(', ')} unavailable`);
}

interface Routes {
  readiness: () => Promise<ReadinessResult>;
  settings: HealthServerSettings;
}

async function route(path: string, { readiness, settings }: Routes): Promise<Reply> {
  switch (path) {
    case '/healthz':
      return text(200, 'OK');
    case '/readyz': {
      if (settings.isShuttingDown?.()) return text(503, 'shutting down');
      const result = await readiness();
      if (!result.ok) settings.logger.warn({ failed: result.failed }, 'not ready');
      return readinessReply(result);
    }
    case '/metrics':
      return { status: 200, type: settings.registry.contentType, body: await settings.registry.metrics() };
    default:
      return text(404, 'Not Found');
  }
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, routes: Routes): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const method = req.method ?? 'GET';
  let reply: Reply;
  try {
    reply = method === 'GET' || method === 'HEAD' ? await route(path, routes) : text(404, 'Not Found');
  } catch (err) {
    routes.settings.logger.error({ err, path }, 'health endpoint failed');
    reply = text(500, 'Internal Server Error');
  }
  res.writeHead(reply.status, { 'content-type': reply.type, 'cache-control': 'no-store' });
  res.end(method === 'HEAD' ? undefined : reply.body);
}

/**
 * /healthz (liveness, no dependency touched), /readyz (every check within its timeout) and
 * /metrics for the services without an HTTP API of their own. Plain node:http: three routes do
 * not need a framework.
 */
export async function startHealthServer(settings: HealthServerSettings): Promise<HealthServer> {
  const routes: Routes = {
    settings,
    readiness: createReadiness(settings.checks, {
      ...(settings.checkTimeoutMs === undefined ? {} : { timeoutMs: settings.checkTimeoutMs }),
      ...(settings.cacheMs === undefined ? {} : { cacheMs: settings.cacheMs }),
    }),
  };
  const server = http.createServer((req, res) => {
    void handle(req, res, routes);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  settings.logger.info({ port }, 'health server listening');
  let closing: Promise<void> | undefined;
  return {
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Prometheus keeps its scrape connection alive; don't wait for it to go away.
        server.closeAllConnections();
      })),
  };
}
