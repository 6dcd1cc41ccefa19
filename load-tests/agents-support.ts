/**
 * Pieces of `npm run bench:agents`: seeding N agents in SQL, the simulated agents (a WebSocket
 * client on /internal/ws/agent, or a long-poll client on target-state), and the api's CPU and RSS
 * read from /proc.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';
import type pg from 'pg';
import { generatePak } from '@brokkr/pak';

export type Mode = 'ws' | 'long-poll';

/** N ACTIVE agents registered with the admin-generator, all targeting stack `all`, agent i also `spread[i % spread.length]`. */
export async function seedAgents(
  pool: pg.Pool,
  n: number,
  spreadCount: number,
): Promise<{ agents: { id: string; pak: string }[]; all: string; spread: string[] }> {
  const generator = (await pool.query<{ id: string }>("SELECT id FROM generators WHERE name = 'admin-generator'")).rows[0]!.id;
  const stacks = await pool.query<{ id: string }>(
    `INSERT INTO stacks (name, generator_id) SELECT 'bench-' || g || '-' || gen_random_uuid(), $1 FROM generate_series(0, $2) g RETURNING id`,
    [generator, spreadCount],
  );
  const [all, ...spread] = stacks.rows.map((r) => r.id);
  const paks = Array.from({ length: n }, () => generatePak());
  const ids = await pool.query<{ id: string }>(
    `INSERT INTO agents (name, cluster_name, status, pak_hash)
     SELECT 'bench-agent-' || i || '-' || left(h, 8), 'bench', 'ACTIVE', h FROM unnest($1::text[]) WITH ORDINALITY AS u(h, i) RETURNING id`,
    [paks.map((p) => p.hash)],
  );
  const agents = ids.rows.map((r, i) => ({ id: r.id, pak: paks[i]!.pak }));
  const agentIds = agents.map((a) => a.id);
  await pool.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) SELECT unnest($1::uuid[]), $2', [
    agentIds,
    generator,
  ]);
  await pool.query('INSERT INTO agent_targets (agent_id, stack_id) SELECT unnest($1::uuid[]), $2', [agentIds, all]);
  await pool.query(
    'INSERT INTO agent_targets (agent_id, stack_id) SELECT a, ($2::uuid[])[1 + (i - 1) % $3] FROM unnest($1::uuid[]) WITH ORDINALITY AS u(a, i)',
    [agentIds, spread, spread.length],
  );
  return { agents, all: all!, spread };
}

/** One simulated agent. `hintedAt` is the time (performance.now) of the first hint since `arm()`. */
export interface SimAgent {
  readonly mode: Mode;
  readonly connected: boolean;
  hintedAt: number | undefined;
  arm(): void;
  start(): void;
  stop(): void;
}

const dispatcher = new Agent({ connections: null, keepAliveTimeout: 120_000, headersTimeout: 0, bodyTimeout: 0 });

/** A WebSocket agent: dials, records hints, redials like Brokkr's agent (1, 2, 4 … s ±20 %). */
export class WsSimAgent implements SimAgent {
  readonly mode = 'ws' as const;
  connected = false;
  hintedAt: number | undefined;
  private socket: WebSocket | undefined;
  private stopped = false;
  private failures = 0;

  constructor(
    private readonly url: string,
    private readonly agent: { id: string; pak: string },
  ) {}

  arm(): void {
    this.hintedAt = undefined;
  }

  start(): void {
    const ws = new WebSocket(`${this.url.replace(/^http/, 'ws')}/internal/ws/agent`, {
      headers: { authorization: `Bearer ${this.agent.pak}`, 'user-agent': 'bench-agent' },
      perMessageDeflate: false,
    });
    this.socket = ws;
    ws.on('open', () => {
      this.connected = true;
      this.failures = 0;
    });
    ws.on('message', () => {
      this.hintedAt ??= performance.now();
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      this.connected = false;
      if (this.stopped) return;
      const delay = Math.min(60_000, 1000 * 2 ** this.failures++) * (0.8 + Math.random() * 0.4);
      setTimeout(() => this.start(), delay).unref();
    });
  }

  stop(): void {
    this.stopped = true;
    this.socket?.terminate();
  }
}

/** A long-poll agent: holds `GET target-state?wait=55` with its ETag; a 200 is a hint. Retries with backoff on errors. */
export class LongPollSimAgent implements SimAgent {
  readonly mode = 'long-poll' as const;
  connected = false;
  hintedAt: number | undefined;
  private etag: string | undefined;
  private stopped = false;
  private failures = 0;
  private readonly controller = new AbortController();

  constructor(
    private readonly url: string,
    private readonly agent: { id: string; pak: string },
  ) {}

  arm(): void {
    this.hintedAt = undefined;
  }

  start(): void {
    void this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const query = this.etag ? '?wait=55' : '';
        const res = await request(`${this.url}/api/v1/agents/${this.agent.id}/target-state${query}`, {
          dispatcher,
          signal: this.controller.signal,
          headers: {
            authorization: `Bearer ${this.agent.pak}`,
            'user-agent': 'bench-agent',
            ...(this.etag ? { 'if-none-match': this.etag } : {}),
          },
        });
        await res.body.dump();
        if (res.statusCode !== 200 && res.statusCode !== 304) throw new Error(String(res.statusCode));
        if (res.statusCode === 200 && this.etag) this.hintedAt ??= performance.now();
        this.etag = String(res.headers.etag ?? '');
        this.connected = true;
        this.failures = 0;
      } catch {
        this.connected = false;
        // Resynchronise with an immediate (unconditional) request, as an agent does after an error.
        this.etag = undefined;
        if (this.stopped) return;
        // Backs off like an agent (1, 2, 4 … 30 s, ±20 %), so a restarting api is not flooded.
        const delay = Math.min(30_000, 1000 * 2 ** this.failures++) * (0.8 + Math.random() * 0.4);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** The next answer counts as "reconnected" only once it arrived after this call. */
  markDisconnected(): void {
    this.connected = false;
  }

  stop(): void {
    this.stopped = true;
    this.controller.abort();
  }
}

/** CPU seconds (user + system) and RSS/peak RSS (MiB) of a process, from /proc. */
export function processStats(pid: number): { cpuSeconds: number; rssMiB: number; peakMiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuSeconds: ticks / 100, rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}

export async function eventuallyAll(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
