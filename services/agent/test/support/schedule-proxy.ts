import { createServer, request as httpRequest, type Server } from 'node:http';
import { freePort } from '@brokkr/testkit';

/**
 * A hub that serves an agent its versions but not its maintenance schedule: an HTTP proxy in
 * front of the broker (WebSocket upgrades refused, so the agent polls through it) that, while
 * `withholdSchedule` is set, drops `maintenance` from the grants it relays and forges the grants
 * digest of every target state, so the agent reads those schedule-less grants again and again.
 */
export class ScheduleProxy {
  withholdSchedule = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<ScheduleProxy> {
    const upstream = new URL(target);
    const port = await freePort();
    const server = createServer();
    const proxy = new ScheduleProxy(server, `http://127.0.0.1:${port}`);
    server.on('request', (req, res) => {
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          if (!proxy.withholdSchedule || answer.statusCode !== 200) {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            return void answer.pipe(res);
          }
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () => {
            let body = Buffer.concat(chunks);
            const headers = { ...answer.headers };
            if (/\/agents\/[^/]+\/grants$/.test(req.url ?? '')) {
              const grants = JSON.parse(body.toString()) as Record<string, unknown>;
              delete grants.maintenance;
              body = Buffer.from(JSON.stringify(grants));
            }
            if (headers['brokkr-grants']) headers['brokkr-grants'] = 'forged-by-the-test-proxy';
            delete headers['transfer-encoding'];
            headers['content-length'] = String(body.length);
            res.writeHead(200, headers);
            res.end(body);
          });
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return proxy;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
