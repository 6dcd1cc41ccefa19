import { randomBytes } from 'node:crypto';
import { generatePak } from '@brokkr/pak';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import pg from 'pg';
import { migrateLatest } from '@brokkr/db';
import { startNats, startPostgres, type NatsHandle, type PostgresHandle } from '@brokkr/infra';
import { freePort, spawnService, withDatabase, type RunningService } from '@brokkr/testkit';

export const KEY_HEX = 'b0a1c2d3e4f5061728394a5b6c7d8e9fb0a1c2d3e4f5061728394a5b6c7d8e9f';

/** One throwaway Postgres for the whole run; a migrated database and a NATS server per scenario. */
export interface Stack {
  dbUrl: string;
  natsUrl: string;
  pool: pg.Pool;
  services: RunningService[];
  close(): Promise<void>;
}

export async function startPostgresServer(): Promise<PostgresHandle> {
  return startPostgres({ url: process.env.BROKKR__DATABASE__URL });
}

export async function freshStack(server: PostgresHandle): Promise<Stack> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`).finally(() => admin.end());
  const dbUrl = withDatabase(server.url, name);
  await migrateLatest({ url: dbUrl });
  const nats: NatsHandle = await startNats();
  const pool = new pg.Pool({ connectionString: dbUrl, max: 4 });
  const services: RunningService[] = [];
  return {
    dbUrl,
    natsUrl: nats.url,
    pool,
    services,
    async close() {
      await Promise.allSettled(services.map((s) => s.stop()));
      await pool.end();
      await nats.stop();
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => c.end());
    },
  };
}

export async function spawnDispatcher(stack: Stack, env: Record<string, string> = {}): Promise<RunningService> {
  const port = await freePort();
  const service = await spawnService({
    service: 'webhook-dispatcher',
    env: {
      BROKKR__DATABASE__URL: stack.dbUrl,
      BROKKR__NATS__URL: stack.natsUrl,
      BROKKR__HEALTH__PORT: String(port),
      BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
      BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      BROKKR__LOG__LEVEL: 'warn',
      ...env,
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  });
  stack.services.push(service);
  return service;
}

/** A PAK in Brokkr's format and its stored hash. */
export const adminPak = generatePak;

export async function spawnApi(stack: Stack, pakHash: string): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  stack.services.push(
    await spawnService({
      service: 'api',
      env: {
        BROKKR__DATABASE__URL: stack.dbUrl,
        BROKKR__NATS__URL: stack.natsUrl,
        BROKKR__BROKER__HOST: '127.0.0.1',
        BROKKR__BROKER__PORT: String(port),
        BROKKR__BROKER__PAK_HASH: pakHash,
        BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
        BROKKR__LOG__LEVEL: 'warn',
      },
      readyUrl: `${url}/readyz`,
    }),
  );
  return url;
}

export interface Receipt {
  webhookId: string;
  body: string;
  at: number;
}

/** A minimal receiver: 204 at once, remembers when each webhook-id first arrived. */
export async function startBenchReceiver(): Promise<{ url: string; receipts: Map<string, Receipt>; close(): Promise<void> }> {
  const receipts = new Map<string, Receipt>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const webhookId = String(req.headers['webhook-id']);
      if (!receipts.has(webhookId)) receipts.set(webhookId, { webhookId, body, at: Date.now() });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    receipts,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function machine(): string {
  const cpus = os.cpus();
  return [
    `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}`,
    `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `${os.type()} ${os.release()} ${os.arch()}`,
    `Node ${process.version}`,
    // Other work on the machine skews every figure; say how busy it was.
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  ].join(', ');
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
