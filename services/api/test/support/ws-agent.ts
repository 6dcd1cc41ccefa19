import { WebSocket } from 'ws';

export interface Frame {
  type: string;
  body: Record<string, unknown>;
}

/**
 * A test agent on `/internal/ws/agent`: records every frame it receives and lets a test wait for
 * one (the wait is a deadline for failing, not a timing assertion).
 */
export class WsAgent {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  closed = false;
  private readonly closedPromise: Promise<void>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()) as Frame);
      this.wakeWaiters();
    });
    this.closedPromise = new Promise((resolve) =>
      ws.once('close', () => {
        this.closed = true;
        this.wakeWaiters();
        resolve();
      }),
    );
  }

  private wakeWaiters(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  static connect(
    baseUrl: string,
    pak: string | undefined,
    path = '/internal/ws/agent',
    headers: Record<string, string> = {},
  ): Promise<WsAgent> {
    const url = baseUrl.replace(/^http/, 'ws') + path;
    const ws = new WebSocket(url, { headers: { ...(pak ? { authorization: `Bearer ${pak}` } : {}), ...headers } });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new WsAgent(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new UpgradeRejected(res.statusCode ?? 0)));
      ws.once('error', reject);
    });
  }

  send(type: string, body: unknown): void {
    this.ws.send(JSON.stringify({ type, body }));
  }

  /** The first frame (from `from` on) matching, waiting for it up to `deadlineMs`. */
  async waitFor(match: (f: Frame) => boolean, what: string, deadlineMs = 15_000, from = 0): Promise<Frame> {
    const end = Date.now() + deadlineMs;
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found) return found;
      if (this.closed) throw new Error(`socket closed while waiting for ${what}`);
      if (Date.now() > end) throw new Error(`no ${what} within ${deadlineMs} ms; got ${JSON.stringify(this.frames.map((f) => f.type))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Resolves when the server closed the socket; rejects after `deadlineMs`. */
  async waitClosed(deadlineMs = 10_000): Promise<void> {
    await Promise.race([
      this.closedPromise,
      new Promise((_, reject) => setTimeout(() => reject(new Error('socket still open')), deadlineMs).unref()),
    ]);
  }

  close(): void {
    this.ws.terminate();
  }
}

export class UpgradeRejected extends Error {
  constructor(readonly status: number) {
    super(`upgrade rejected with ${status}`);
  }
}

/** The status a rejected upgrade got (101 when it was accepted). */
export async function upgradeStatus(
  baseUrl: string,
  pak: string | undefined,
  path = '/internal/ws/agent',
  headers: Record<string, string> = {},
): Promise<number> {
  try {
    const agent = await WsAgent.connect(baseUrl, pak, path, headers);
    agent.close();
    return 101;
  } catch (err) {
    if (err instanceof UpgradeRejected) return err.status;
    throw err;
  }
}
