/**
 * Pieces of `npm run bench:agents`: seeding N agents in SQL, the simulated agents (a WebSocket
 * client on /internal/ws/agent, or a long-poll client on target-state), and the api's CPU and RSS
 * read from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';
import type pg from 'pg';
import { AGENT_FEATURES_HEADER, TARGET_STATE_PATCH_FEATURE, TARGET_STATE_SIGNATURES_FEATURE } from '@brokkr/contracts';
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

/**
 * Now in epoch milliseconds, at performance.now()'s resolution: the simulated agents run in other
 * processes than the one that posts the changes (agents-sim.ts), and each process's performance.now()
 * counts from its own start.
 */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** One simulated agent. Times are `epochNow()` of the first such moment since `arm()`. */
export interface SimAgent {
  readonly mode: Mode;
  readonly connected: boolean;
  /** "Told": the first hint frame (WebSocket) or 200 (long-poll) since `arm()`. */
  hintedAt: number | undefined;
  /** Target-state requests answered since `arm()`. */
  answers: number;
  /** Forgets the last measurement. */
  arm(): void;
  /** "Holds": the first target-state answer since `arm()` that contained the object. */
  heldAt(objectId: string): number | undefined;
  /** `signature`: the one carried with the object (an agent that asks for them), undefined when none came. */
  onReceived: ((objectId: string, signature: unknown) => void) | undefined;
  start(): void;
  stop(): void;
}

/**
 * The WebSocket agents' fetches share at most this many connections. Each real agent would hold its
 * own, but here the api and the simulator process would then need two descriptors per agent, and
 * the machine allows 20,000 per process (this limit is per api process and simulator process). A fetch that finds them all busy waits its turn here, which
 * counts against "holds".
 */
export const fetchDispatcher = new Agent({ connections: 1000, keepAliveTimeout: 120_000, headersTimeout: 0, bodyTimeout: 0 });

interface Answer {
  status: number;
  etag: string | undefined;
}

/**
 * The ids of a target-state answer's objects, read without parsing the answer: JSON.parse of a
 * 10 MiB answer per agent would cost the simulator more than the api that serves it. Quotes inside
 * a JSON string are escaped, so `{"id":"` or `,"id":"` can only start an object's own field.
 */
const ID_FIELD = /[{,]"id":"([0-9a-f-]{36})"/g;
export const objectIdsOf = (body: string): string[] => Array.from(body.matchAll(ID_FIELD), (m) => m[1]!);

/** An object as an agent that asks for signatures reads it: its id and the signature carried with it. */
export interface Received {
  id: string;
  signature?: unknown;
}

/** The objects of an answer with their signatures: parsed (the signature is needed whole, as the agent's gate needs it). */
const receivedOf = (body: string): Received[] => (JSON.parse(body) as Received[]).map((o) => ({ id: o.id, signature: o.signature }));

/**
 * GET target-state as our agent sends it (services/agent/src/broker/client.ts): `mode=full`, the
 * ETag it holds as If-None-Match, `wait` only when it wants to be held, `signatures=true` when it
 * checks signatures (a trust policy).
 */
async function fetchTargetState(
  agent: { url: string; id: string; pak: string },
  held: { etag: string | undefined; waitSeconds: number; signatures?: boolean },
  signal: AbortSignal,
  onObjects: (objects: Received[]) => void,
): Promise<Answer> {
  const query = new URLSearchParams({ mode: 'full' });
  const { etag, waitSeconds } = held;
  if (etag && waitSeconds > 0) query.set('wait', String(waitSeconds));
  if (held.signatures) query.set('signatures', 'true');
  const res = await request(`${agent.url}/api/v1/agents/${agent.id}/target-state?${query.toString()}`, {
    dispatcher: fetchDispatcher,
    signal,
    headers: { authorization: `Bearer ${agent.pak}`, 'user-agent': 'bench-agent', ...(etag ? { 'if-none-match': etag } : {}) },
  });
  if (res.statusCode === 200) {
    const body = await res.body.text();
    onObjects(held.signatures ? receivedOf(body) : objectIdsOf(body).map((id) => ({ id })));
  } else await res.body.dump();
  if (res.statusCode !== 200 && res.statusCode !== 304) throw new Error(String(res.statusCode));
  return { status: res.statusCode, etag: typeof res.headers.etag === 'string' ? res.headers.etag : etag };
}

/** What both kinds of simulated agent record. */
abstract class Recording {
  hintedAt: number | undefined;
  answers = 0;
  /** Called once per object when it is first received since `arm()` (bench:signatures checks its signature then). */
  onReceived: ((objectId: string, signature: unknown) => void) | undefined;
  /** When each object was first received since `arm()`. */
  private readonly seen = new Map<string, number>();

  arm(): void {
    this.hintedAt = undefined;
    this.answers = 0;
    this.seen.clear();
  }

  heldAt(objectId: string): number | undefined {
    return this.seen.get(objectId);
  }

  protected told(): void {
    this.hintedAt ??= epochNow();
  }

  protected received(objects: Received[]): void {
    const now = epochNow();
    for (const { id, signature } of objects)
      if (!this.seen.has(id)) {
        this.seen.set(id, now);
        this.onReceived?.(id, signature);
      }
  }
}

/**
 * A WebSocket agent that behaves like ours (services/agent/src/runtime/target-watcher.ts): dials
 * asking for `target_state_patch` frames; a patch on top of the ETag it holds (and no fetch in
 * flight) gives it the new objects without a request; any other hint, or a patch it cannot apply,
 * makes it GET target-state (hints during a fetch lead to one more fetch after it). While the
 * channel is up it also resyncs every `resyncMs` ±20 % (0: never). Redials like Brokkr's agent
 * (1, 2, 4 … s ±20 %). `patches: false` behaves like our agent before patches (every hint fetches);
 * `signatures: true` like our agent with a trust policy (each object comes with its signature).
 */
export class WsSimAgent extends Recording implements SimAgent {
  readonly mode = 'ws' as const;
  connected = false;
  private socket: WebSocket | undefined;
  private stopped = false;
  private failures = 0;
  private etag: string | undefined;
  private fetching = false;
  private again = false;
  private resync: NodeJS.Timeout | undefined;
  private readonly controller = new AbortController();

  constructor(
    private readonly url: string,
    private readonly agent: { id: string; pak: string },
    private readonly resyncMs: number,
    /** `signatures`: asks for them as our agent with a trust policy does, in the patch frames and the answers. */
    private readonly asks: { patches: boolean; signatures: boolean } = { patches: true, signatures: false },
  ) {
    super();
  }

  private get patches(): boolean {
    return this.asks.patches;
  }

  private get signatures(): boolean {
    return this.asks.signatures;
  }

  start(): void {
    const asked = [TARGET_STATE_PATCH_FEATURE, ...(this.signatures ? [TARGET_STATE_SIGNATURES_FEATURE] : [])].join(',');
    const features: Record<string, string> = this.patches ? { [AGENT_FEATURES_HEADER]: asked } : {};
    const ws = new WebSocket(`${this.url.replace(/^http/, 'ws')}/internal/ws/agent`, {
      headers: { authorization: `Bearer ${this.agent.pak}`, 'user-agent': 'bench-agent', ...features },
      perMessageDeflate: false,
    });
    this.socket = ws;
    ws.on('open', () => {
      this.connected = true;
      this.failures = 0;
      this.fetch();
    });
    ws.on('message', (data) => {
      this.told();
      if (!this.applied(data.toString())) this.fetch();
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      this.connected = false;
      if (this.stopped) return;
      const delay = Math.min(60_000, 1000 * 2 ** this.failures++) * (0.8 + Math.random() * 0.4);
      setTimeout(() => this.start(), delay).unref();
    });
  }

  /** A `target_state_patch` on top of what it holds: the objects it carries are held now. */
  private applied(text: string): boolean {
    if (this.fetching || !text.startsWith('{"type":"target_state_patch"')) return false;
    const body = (JSON.parse(text) as { body: { base_etag: string; etag: string; objects: Received[] } }).body;
    if (body.base_etag !== this.etag) return false;
    this.etag = body.etag;
    this.received(body.objects.map((o) => ({ id: o.id, signature: o.signature })));
    return true;
  }

  private fetch(): void {
    if (this.fetching) {
      this.again = true;
      return;
    }
    this.fetching = true;
    clearTimeout(this.resync);
    const held = { etag: this.etag, waitSeconds: 0, signatures: this.signatures };
    fetchTargetState({ url: this.url, ...this.agent }, held, this.controller.signal, (objects) => this.received(objects))
      .then(
        (answer) => {
          this.answers++;
          this.etag = answer.etag;
        },
        () => (this.etag = undefined),
      )
      .finally(() => {
        this.fetching = false;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.fetch();
        } else if (this.resyncMs > 0) {
          this.resync = setTimeout(() => this.fetch(), this.resyncMs * (0.8 + Math.random() * 0.4));
          this.resync.unref();
        }
      });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.resync);
    this.controller.abort();
    this.socket?.terminate();
  }
}

/**
 * One keep-alive HTTP/1.1 connection that sends pre-built GETs and reads answers with a
 * Content-Length (the api's target-state answers always have one). A load generator's client, as
 * wrk or k6 have: 10,000 long-poll agents through undici cost this process about 0.7 ms of CPU
 * each per change, several times the api's own cost, so the figures measured this process.
 */
class RawHttpConnection {
  private readonly socket: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (a: RawAnswer) => void; reject: (e: Error) => void } | undefined;
  private closed = false;

  constructor(url: URL) {
    this.socket = createConnection({ host: url.hostname, port: Number(url.port), noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    const fail = (err?: Error) => {
      this.closed = true;
      this.waiting?.reject(err ?? new Error('connection closed'));
      this.waiting = undefined;
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => fail());
  }

  get usable(): boolean {
    return !this.closed;
  }

  get(request: string): Promise<RawAnswer> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.buffer.subarray(0, headEnd).toString('latin1');
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.buffer.length < headEnd + 4 + length) return;
    const body = this.buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(headEnd + 4 + length);
    const answer = { status: Number(head.slice(9, 12)), etag: /\r\netag: *([^\r]+)/i.exec(head)?.[1], body };
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(answer);
  }
}

interface RawAnswer {
  status: number;
  etag: string | undefined;
  body: string;
}

/**
 * A long-poll agent: holds `GET target-state?mode=full&wait=55` with its ETag on its own
 * connection, as ours does; a 200 is "told", a 200 containing the expected object "holds".
 * Reconnects and resynchronises (no ETag) with backoff on errors.
 */
export class LongPollSimAgent extends Recording implements SimAgent {
  readonly mode = 'long-poll' as const;
  connected = false;
  private etag: string | undefined;
  private stopped = false;
  private failures = 0;
  private connection: RawHttpConnection | undefined;
  private readonly target: URL;
  private readonly head: string;

  constructor(
    url: string,
    private readonly agent: { id: string; pak: string },
  ) {
    super();
    this.target = new URL(url);
    this.head =
      `GET /api/v1/agents/${agent.id}/target-state?mode=full&wait=55 HTTP/1.1\r\nHost: ${this.target.host}\r\n` +
      `Authorization: Bearer ${agent.pak}\r\nUser-Agent: bench-agent\r\n`;
  }

  start(): void {
    void this.loop();
  }

  private request(): string {
    // The first request of a connection (no ETag) is answered at once; `wait` only matters with one.
    return this.etag ? `${this.head}If-None-Match: ${this.etag}\r\n\r\n` : `${this.head}\r\n`;
  }

  private record(answer: RawAnswer, sent: string | undefined): void {
    if (answer.status !== 200 && answer.status !== 304) throw new Error(String(answer.status));
    this.answers++;
    if (answer.status === 200) {
      this.received(objectIdsOf(answer.body).map((id) => ({ id })));
      if (sent) this.told();
    }
    this.etag = answer.etag ?? this.etag;
    this.connected = true;
    this.failures = 0;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.connection?.usable) this.connection = new RawHttpConnection(this.target);
        const sent = this.etag;
        this.record(await this.connection.get(this.request()), sent);
      } catch {
        this.connected = false;
        this.connection?.close();
        this.connection = undefined;
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
    this.connection?.close();
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

/** CPU seconds of a process and of its children, live (the task children lists in /proc) and reaped (cutime, cstime). */
export function treeCpuSeconds(pid: number): number {
  let ticks = 0;
  const visit = (p: number): void => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(' ') : []) visit(Number(child));
      }
    } catch {
      // The process ended between listing and reading: its time is in its parent's cutime now.
    }
  };
  visit(pid);
  return ticks / 100;
}

/** The pid of the postmaster serving `url` (its data directory's postmaster.pid; same machine). */
export async function postmasterPid(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'");
  return Number(readFileSync(`${rows[0]!.setting}/postmaster.pid`, 'utf8').split('\n')[0]);
}

/** The pid of the nats-server listening on the port of `natsUrl`, from the processes' command lines. */
export function natsServerPid(natsUrl: string): number {
  const port = new URL(natsUrl).port;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('nats-server') && args[args.indexOf('-p') + 1] === port) return Number(entry);
    } catch {
      // Gone already.
    }
  }
  throw new Error(`no nats-server on port ${port}`);
}

/** brokkr_target_state_reads_total{source="database"} of an api (0 before the first read). */
export async function databaseReads(metricsUrl: string): Promise<number> {
  const res = await request(metricsUrl, { dispatcher: fetchDispatcher });
  const text = await res.body.text();
  return Number(/^brokkr_target_state_reads_total\{[^}]*source="database"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
}

export async function eventuallyAll(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
