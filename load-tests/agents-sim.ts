/**
 * The simulated agents of `npm run bench:agents` live in child processes (agents-sim-worker.ts):
 * the machine allows 20,000 open files per process, and an agent needs at least one socket, so one
 * process cannot simulate the 20,000 agents two api replicas of 10,000 take. Agent i runs in
 * process i % P. Times cross processes as epoch milliseconds (`epochNow`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type SimKind = 'ws' | 'ws-fetch' | 'long-poll';

/** One agent to simulate; `index` is its place in the whole fleet (it picks its expected object). */
export interface SimAgentSpec {
  index: number;
  kind: SimKind;
  url: string;
  id: string;
  pak: string;
  /** Asks for the objects' signatures (`target-state-signatures`, `signatures=true`), as our agent with a trust policy does. */
  signatures?: boolean;
}

/**
 * bench:signatures: after `arm`, each agent that receives an object checks the signature that came
 * with it against `root` with @brokkr/trust, `content` being the bytes every agent is served (as
 * our agent's trust gate does; only when none came does it ask `GET /agents/{id}/signatures`, a
 * fallback counted apart); `collect` then reports when each agent had checked it instead of when it
 * held it.
 */
export interface SimVerify {
  stackId: string;
  content: string;
  root: unknown;
}

/** What a simulator process is asked over IPC; each request gets one reply with the same `seq`. */
export type SimRequest =
  | { type: 'start'; agents: SimAgentSpec[]; resyncMs: number }
  | { type: 'connected' }
  | { type: 'arm'; verify?: SimVerify }
  | { type: 'collect'; ids: string[]; timeoutMs: number }
  | { type: 'disconnected' }
  | { type: 'stop' };

/**
 * After `collect`: when (epoch ms) each agent first held `ids[index % ids.length]` since `arm`, once
 * all of the process's agents hold theirs or the timeout passed; when each was told; answers; the
 * process's CPU seconds from `arm` until then.
 */
export interface Collected {
  held: number[];
  /** With `verify`: objects whose signature was missing or refused (each would be an event `refused: …`). */
  refused?: number;
  /** With `verify`: objects that came without their signature, so it was asked for (GET /agents/{id}/signatures). */
  fallbacks?: number;
  missed: number;
  told: number[];
  answers: number;
  cpuSeconds: number;
}

type Reply = { seq: number; result?: unknown; error?: string };

const WORKER = fileURLToPath(new URL('./agents-sim-worker.ts', import.meta.url));
/** Connections are opened this many at a time, each batch until 90 % of those started are up. */
const CONNECT_BATCH = 250;

/** One simulator process and its pending requests. */
class SimProcess {
  private readonly child: ChildProcess;
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited: Error | undefined;

  constructor() {
    // The parent's way of running TypeScript (package.json's bench scripts).
    this.child = fork(WORKER, [], { execArgv: ['--import', 'tsx', '--conditions=development'], stdio: 'inherit' });
    this.child.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.seq);
      this.pending.delete(reply.seq);
      if (reply.error === undefined) waiting?.resolve(reply.result);
      else waiting?.reject(new Error(`simulator process: ${reply.error}`));
    });
    this.child.on('exit', (code, signal) => this.fail(new Error(`simulator process exited (${code ?? signal})`)));
    this.child.on('error', (err) => this.fail(err));
  }

  private fail(err: Error): void {
    this.exited ??= err;
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
  }

  ask<T>(request: SimRequest): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ seq, request });
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    await this.ask({ type: 'stop' }).catch(() => undefined);
    this.child.disconnect();
    await exited;
  }
}

/** The simulated agents of one scenario, across `processes` child processes. */
export class SimFleet {
  private readonly shards: SimProcess[];
  private total = 0;

  constructor(processes: number) {
    this.shards = Array.from({ length: processes }, () => new SimProcess());
  }

  get processes(): number {
    return this.shards.length;
  }

  /** Starts the agents CONNECT_BATCH at a time, then waits (up to 2 minutes) until all are connected. */
  async connect(agents: SimAgentSpec[], resyncMs: number): Promise<void> {
    for (let i = 0; i < agents.length; i += CONNECT_BATCH) {
      const batch = agents.slice(i, i + CONNECT_BATCH);
      await Promise.all(
        this.shards.map((shard, s) =>
          shard.ask({ type: 'start', agents: batch.filter((a) => a.index % this.shards.length === s), resyncMs }),
        ),
      );
      this.total += batch.length;
      await this.until((n) => n >= this.total * 0.9, 30_000);
    }
    await this.allConnected(120_000);
  }

  /** Waits until every agent is connected; false when `timeoutMs` passed first. */
  allConnected(timeoutMs: number): Promise<boolean> {
    return this.until((n) => n === this.total, timeoutMs);
  }

  async arm(verify?: SimVerify): Promise<void> {
    await this.all(verify ? { type: 'arm', verify } : { type: 'arm' });
  }

  /** Every process's agents' times, once they hold `ids[index % ids.length]`; CPU summed over the processes. */
  async collect(ids: string[], timeoutMs: number): Promise<Collected> {
    const parts = await this.all<Collected>({ type: 'collect', ids, timeoutMs });
    return {
      held: parts.flatMap((p) => p.held),
      refused: parts.reduce((n, p) => n + (p.refused ?? 0), 0),
      fallbacks: parts.reduce((n, p) => n + (p.fallbacks ?? 0), 0),
      missed: parts.reduce((n, p) => n + p.missed, 0),
      told: parts.flatMap((p) => p.told),
      answers: parts.reduce((n, p) => n + p.answers, 0),
      cpuSeconds: parts.reduce((n, p) => n + p.cpuSeconds, 0),
    };
  }

  /** Long-poll agents count as connected again only after their next answer (the api is restarting). */
  async markDisconnected(): Promise<void> {
    await this.all({ type: 'disconnected' });
  }

  async stop(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.stop()));
  }

  private all<T>(request: SimRequest): Promise<T[]> {
    return Promise.all(this.shards.map((shard) => shard.ask<T>(request)));
  }

  private async until(enough: (connected: number) => boolean, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    const connected = async () => (await this.all<number>({ type: 'connected' })).reduce((a, b) => a + b, 0);
    while (Date.now() < end) {
      if (enough(await connected())) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return enough(await connected());
  }
}
