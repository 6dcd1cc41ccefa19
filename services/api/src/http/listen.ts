import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { answerClientErrors } from './client-errors.ts';

// Longer than the usual load-balancer idle timeout (60 s), so the balancer closes idle
// connections first and never sends a request into one we are closing.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const IDLE_SWEEP_MS = 100;
/**
 * Connections the kernel queues before the process accepts them (it caps this at
 * net.core.somaxconn). Node's default, 511, drops the SYNs of a fleet that reconnects at once
 * after a restart, and each dropped agent waits out a TCP retransmission or its own backoff.
 */
const LISTEN_BACKLOG = 4096;

/** The server: express serves every request (http/router.ts finds the api's routes). */
export function listen(app: Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(app);
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve(server);
    });
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
    answerClientErrors(server);
  });
}

/**
 * Stops accepting connections and waits for requests in flight. Keep-alive connections are closed
 * as soon as they are idle (also those whose request finishes during the wait). After `graceMs`
 * whatever is still open is cut.
 */
export function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idleSweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const timer = setTimeout(() => server.closeAllConnections(), graceMs).unref();
    server.close(() => {
      clearInterval(idleSweep);
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
