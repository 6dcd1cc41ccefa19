import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  webhookId: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
  delayMs?: number;
}

/** Decides each reply; `nth` counts this webhook-id's requests from 1. */
export type Responder = (req: ReceivedRequest, nth: number) => Reply;

export interface TestReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Requests per webhook-id: what a receiver deduplicating on webhook-id sees. */
  countById: Map<string, number>;
  respond: Responder;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request it gets. */
export async function startReceiver(respond: Responder = () => ({ status: 200 })): Promise<TestReceiver> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const receiver: TestReceiver = {
    url: '',
    port: 0,
    requests: [],
    countById: new Map(),
    respond,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const webhookId = String(req.headers['webhook-id'] ?? '');
      const nth = (receiver.countById.get(webhookId) ?? 0) + 1;
      receiver.countById.set(webhookId, nth);
      const request = { webhookId, headers: req.headers, body: Buffer.concat(chunks).toString(), receivedAt: Date.now() };
      receiver.requests.push(request);
      const reply = receiver.respond(request, nth);
      if (reply.hang) {
        hanging.add(res);
        return;
      }
      const send = () => {
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}
