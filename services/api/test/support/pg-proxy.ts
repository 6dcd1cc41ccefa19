import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of the test PostgreSQL server, so a test can take the database away from
 * one api process and give it back without touching the server the other tests share:
 *  - `up`: connections are piped to the real server;
 *  - `down`: every open connection is cut and new ones are refused (server stopped or gone);
 *  - `starting`: connections are accepted and answered with PostgreSQL's own FATAL 57P03 "the
 *    database system is starting up" (a server restarting or in recovery).
 */
export type PgProxyMode = 'up' | 'down' | 'starting';

export interface PgProxy {
  /** The database URL with the proxy as its host. */
  url: string;
  setMode(mode: PgProxyMode): Promise<void>;
  close(): Promise<void>;
}

/** A backend ErrorResponse ('E'): severity, SQLSTATE and message fields, each a C string. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/** Waits for the client's startup packet (length-prefixed), then refuses it like a starting server. */
function answerStarting(socket: Socket): void {
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    if (received.length >= 4 && received.length >= received.readInt32BE(0)) {
      socket.end(errorResponse('57P03', 'the database system is starting up'));
    }
  });
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let mode: PgProxyMode = 'up';

  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (mode === 'starting') {
      answerStarting(client);
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let port = 0;
  await listen();
  port = (server.address() as AddressInfo).port;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);

  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };

  return {
    url: url.toString(),
    async setMode(next) {
      const wasListening = server.listening;
      mode = next;
      cutAll();
      if (next === 'down' && wasListening) await new Promise<void>((resolve) => server.close(() => resolve()));
      if (next !== 'down' && !wasListening) await listen();
    },
    async close() {
      cutAll();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
