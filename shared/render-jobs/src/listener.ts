import pg from 'pg';
import type { Logger } from '@brokkr/logger';

export interface ChannelListener {
  /** Whether the LISTEN is in place now (notifications sent meanwhile reach this process). */
  readonly listening: boolean;
  close(): Promise<void>;
}

export interface ListenOptions {
  url: string;
  channel: string;
  /** application_name of the connection, so an operator tells it apart in pg_stat_activity. */
  applicationName: string;
  onNotify(payload: string): void;
  /**
   * Called each time the LISTEN is (re-)established: notifications sent while it was down are lost,
   * so the caller looks for what it may have missed.
   */
  onListening?(): void;
  logger: Logger;
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/**
 * LISTEN on a connection of its own (a pooled connection would be handed to other queries, and a
 * notification only reaches the session that listens). It comes back after the database or the
 * network drops it, with a growing pause; the caller's own periodic look covers the gap.
 */
export function listenChannel(options: ListenOptions): ChannelListener {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;

  const retry = () => {
    if (closed) return;
    timer = setTimeout(() => void connect(), retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };

  const lost = (c: pg.Client, err?: Error) => {
    if (client !== c) return;
    client = undefined;
    if (listening) options.logger.warn({ err: err?.message, channel: options.channel }, 'LISTEN connection lost; reconnecting');
    listening = false;
    void c.end().catch(() => undefined);
    retry();
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: options.url, application_name: options.applicationName });
    client = c;
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c));
    c.on('notification', (n) => {
      if (n.channel === options.channel) options.onNotify(n.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN "${options.channel}"`);
      if (closed || client !== c) return void c.end().catch(() => undefined);
      listening = true;
      retryMs = FIRST_RETRY_MS;
      options.onListening?.();
    } catch (err) {
      lost(c, err as Error);
    }
  }

  void connect();
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      listening = false;
      await c?.end().catch(() => undefined);
    },
  };
}
