import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect } from 'node:net';
import { freePort } from '@brokkr/testkit';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * A pass-through HTTP proxy in front of the broker that records every request line and header
 * (WebSocket upgrades included), so a test can see what a client really sends.
 */
export class RecordingProxy {
  readonly requests: RecordedRequest[] = [];
  /** While true, WebSocket upgrades get 404 (a hub, or a proxy in front of it, that does not offer the channel). */
  refuseUpgrades = false;
  private readonly tunnels = new Set<{ destroy(): void }>();

  /** Cuts every open WebSocket tunnel (both TCP connections), like a network failure. */
  cutUpgrades(): void {
    for (const t of this.tunnels) t.destroy();
    this.tunnels.clear();
  }

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<RecordingProxy> {
    const upstream = new URL(target);
    const port = await freePort();
    const server = createServer();
    const proxy = new RecordingProxy(server, `http://127.0.0.1:${port}`);
    server.on('request', (req, res) => {
      proxy.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    server.on('upgrade', (req, socket, head) => {
      proxy.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (proxy.refuseUpgrades) return void socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      const up = connect(Number(upstream.port), upstream.hostname, () => {
        const lines = [`${req.method} ${req.url} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        up.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length) up.write(head);
        up.pipe(socket);
        socket.pipe(up);
      });
      const tunnel = { destroy: () => (up.destroy(), socket.destroy()) };
      proxy.tunnels.add(tunnel);
      up.on('close', () => (proxy.tunnels.delete(tunnel), socket.destroy()));
      socket.on('close', () => (proxy.tunnels.delete(tunnel), up.destroy()));
      up.on('error', () => socket.destroy());
      socket.on('error', () => up.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return proxy;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
