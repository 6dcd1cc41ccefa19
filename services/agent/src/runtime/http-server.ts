import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@brokkr/logger';
import { createReadiness, type ReadinessCheck } from '@brokkr/health';
import type { Registry } from '@brokkr/telemetry';

export interface AgentHttpDeps {
  port: number;
  registry: Registry;
  logger: Logger;
  /** Named reachability checks (kubernetes, broker) for /readyz and /health. */
  checks: Record<string, ReadinessCheck>;
  /** Extra fields for /health (broker connection, last heartbeat). */
  status(): { brokerConnected: boolean; lastHeartbeat: Date | undefined; agentStatus: string };
  isShuttingDown(): boolean;
  version: string;
}

export interface AgentHttpServer {
  port: number;
  close(): Promise<void>;
}

type Reply = { status: number; type: string; body: string };
const text = (status: number, body: string): Reply => ({ status, type: 'text/plain; charset=utf-8', body });
const json = (status: number, body: unknown): Reply => ({ status, type: 'application/json', body: JSON.stringify(body) });

/** Brokkr's /health JSON: 200 only with Kubernetes reachable and the last heartbeat accepted. */
function healthReply(deps: AgentHttpDeps, kubernetesError: string | undefined, started: number): Reply {
  const s = deps.status();
  const healthy = !kubernetesError && s.brokerConnected;
  return json(healthy ? 200 : 503, {
    status: healthy ? 'healthy' : 'unhealthy',
    kubernetes: { connected: !kubernetesError, ...(kubernetesError ? { error: kubernetesError } : {}) },
    broker: { connected: s.brokerConnected, last_heartbeat: s.lastHeartbeat?.toISOString() ?? null },
    agent_status: s.agentStatus,
    uptime_seconds: Math.floor((Date.now() - started) / 1000),
    version: deps.version,
    timestamp: new Date().toISOString(),
  });
}

/**
 * /healthz (liveness: the process answers), /readyz (Kubernetes and the broker both reachable),
 * /health (Brokkr's JSON status) and /metrics, on the agent's health port.
 */
export async function startAgentHttpServer(deps: AgentHttpDeps): Promise<AgentHttpServer> {
  const readiness = createReadiness(deps.checks, { timeoutMs: 3000, cacheMs: 2000 });
  const started = Date.now();
  const route = async (path: string): Promise<Reply> => {
    switch (path) {
      case '/healthz':
        return text(200, 'OK');
      case '/readyz': {
        if (deps.isShuttingDown()) return text(503, 'shutting down');
        const result = await readiness();
        return result.ok ? text(200, 'Ready') : text(503, `${Object.keys(result.failed).join(', ')} unavailable`);
      }
      case '/health':
        return healthReply(deps, (await readiness()).failed.kubernetes, started);
      case '/metrics':
        return { status: 200, type: deps.registry.contentType, body: await deps.registry.metrics() };
      default:
        return text(404, 'Not Found');
    }
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const reply = req.method === 'GET' || req.method === 'HEAD' ? route(path) : Promise.resolve(text(405, 'Method Not Allowed'));
    void reply
      .catch((err: unknown) => {
        deps.logger.error({ err, path }, 'health endpoint failed');
        return text(500, 'Internal Server Error');
      })
      .then((r) => {
        res.writeHead(r.status, { 'content-type': r.type, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : r.body);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  deps.logger.info({ port }, 'health server listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
