/**
 * Infrastructure for the api benchmark: a throwaway PostgreSQL and NATS (@brokkr/infra) and api
 * processes run from the BUILT code (`node services/api/dist/main.js`): tsx would add its loader
 * to every process and we want the figures of what operators run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort, repoRoot, startNats, startPostgres, type NatsHandle, type PostgresHandle } from '@brokkr/infra';

export interface ApiProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export interface ApiBenchEnv {
  /** The superuser's `postgres` database (pg_stat_statements is queried there). */
  adminUrl: string;
  databaseUrl: string;
  /** A second, empty database on the same server for Brokkr's broker (BROKKR_PEER_BROKER). */
  peerDatabaseUrl: string;
  /** The same database as a libpq URL over the server's Unix socket (reachable from another network namespace). */
  peerSocketUrl: string;
  /** The postmaster's pid: its CPU plus its backends' is the database's share of the machine. */
  postgresPid: number;
  /** nats-server's pid: our side's third process (Brokkr's broker uses no NATS). */
  natsPid: number;
  /** Environment shared by every api process (database, NATS, admin PAK hash). */
  apiEnv: Record<string, string>;
  stop(): Promise<void>;
}

export const DATABASE = 'brokkr_bench';
export const PEER_DATABASE = 'brokkr_peer';

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function startInfra(adminPakHash: string): Promise<ApiBenchEnv> {
  let postgres: PostgresHandle | undefined;
  let nats: NatsHandle | undefined;
  try {
    // pg_stat_statements: the bench reports statements per request (BEGIN and COMMIT included).
    postgres = await startPostgres({ settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } });
    nats = await startNats();
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    try {
      for (const db of [DATABASE, PEER_DATABASE]) await admin.query(`CREATE DATABASE ${db}`);
      await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    } finally {
      await admin.end();
    }
  } catch (err) {
    await Promise.allSettled([postgres?.stop(), nats?.stop()]);
    throw err;
  }
  const databaseUrl = withDatabase(postgres.url, DATABASE);
  const [pgHandle, natsHandle] = [postgres, nats];
  const postmasterPid = readFileSync(path.join(pgHandle.dir!, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]!;
  const port = new URL(pgHandle.url).port;
  return {
    adminUrl: pgHandle.url,
    databaseUrl,
    peerDatabaseUrl: withDatabase(pgHandle.url, PEER_DATABASE),
    // Brokkr parses the URL before libpq sees it and wants a host; libpq's `host` parameter wins.
    peerSocketUrl: `postgres://postgres@localhost:${port}/${PEER_DATABASE}?host=${pgHandle.dir}`,
    postgresPid: Number(postmasterPid),
    natsPid: natsServerPid(natsHandle.port),
    apiEnv: {
      // Over the Unix socket, as Brokkr's side is (BENCH_PG_TRANSPORT=tcp for loopback TCP): on
      // loopback every TCP write also runs the receiver's network stack, a few µs per statement.
      BROKKR__DATABASE__URL:
        process.env.BENCH_PG_TRANSPORT === 'tcp' ? databaseUrl : `postgres://postgres@localhost:${port}/${DATABASE}?host=${pgHandle.dir}`,
      BROKKR__NATS__URL: natsHandle.url,
      BROKKR__BROKER__PAK_HASH: adminPakHash,
      BROKKR__BROKER__HOST: '127.0.0.1',
      // Per-request logging is not what we measure; warnings and errors still show up.
      BROKKR__LOG__LEVEL: 'warn',
      BROKKR__LOG__FORMAT: 'json',
    },
    async stop() {
      await Promise.allSettled([natsHandle.stop(), pgHandle.stop()]);
    },
  };
}

export async function waitReady(url: string, proc: { exited: boolean; output(): string }, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !proc.exited) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`api at ${url} did not become ready:\n${proc.output().slice(-4000)}`);
}

/** The node flags of the api's `npm start` (services/api/package.json), so a benchmark runs the api as operators do. */
export function apiStartFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'services', 'api', 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(' ').filter((word) => word.startsWith('--'));
}

/** `tsc -b services/api`: the benchmarks run the built api. */
export function buildApi(): void {
  execFileSync(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-b', 'services/api'], { cwd: repoRoot, stdio: 'inherit' });
}

/** One api process from services/api/dist (run `tsc -b services/api` first); `nodeArgs` e.g. --cpu-prof. */
export async function spawnApi(env: Record<string, string>, nodeArgs: string[] = [], fixedPort?: number): Promise<ApiProcess> {
  const port = fixedPort ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  // BENCH_API_MAIN: another build of the api (e.g. a patched copy of dist/) for an A/B comparison.
  const main = process.env.BENCH_API_MAIN ?? path.join(repoRoot, 'services', 'api', 'dist', 'main.js');
  const child = spawn(process.execPath, [...nodeArgs, main], {
    cwd: repoRoot,
    env: { ...process.env, ...env, BROKKR__BROKER__PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const state = { exited: false, output: () => log };
  child.stdout?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-100_000)));
  child.stderr?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-100_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (state.exited = true));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitReady(url, state);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }
  return { url, pid: child.pid!, child, output: state.output, stop };
}

/**
 * VACUUM (ANALYZE) of one side's database between steps, outside any measured window: the
 * autovacuum a step's inserts trigger would otherwise land in the next step, often the other
 * side's, and be counted as its PostgreSQL CPU (pg CPU is the whole server's).
 */
export async function vacuumDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase(adminUrl, database) });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE)');
  } finally {
    await client.end();
  }
}

/** Statements PostgreSQL has executed in `database` so far (pg_stat_statements; BEGIN/COMMIT count too). */
export async function statementsIn(adminUrl: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string | null }>(
      `SELECT sum(calls)::text AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
      [database],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** Resident set size now and at its peak (VmHWM), in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/** What the V8 heap holds of an api process's RSS (its /metrics, prom-client's default metrics). */
export async function heapOf(url: string): Promise<string | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const mib = (name: string) => {
      const values = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'gm'))].map((m) => Number(m[1]));
      return values.length ? `${(values.reduce((a, b) => a + b, 0) / 1024 / 1024).toFixed(0)}` : '?';
    };
    return `V8 heap used ${mib('nodejs_heap_size_used_bytes')} of ${mib('nodejs_heap_size_total_bytes')} MiB, external ${mib('nodejs_external_memory_bytes')} MiB`;
  } catch {
    return undefined;
  }
}

/** The nats-server listening on `port` (it runs under a guard script, whose pid the handle does not give). */
function natsServerPid(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (path.basename(argv[0] ?? '') === 'nats-server' && argv[argv.indexOf('-p') + 1] === String(port)) return Number(entry);
  }
  throw new Error(`no nats-server process listens on port ${port}`);
}

/**
 * Times the process's threads (all of them) went to sleep waiting for something: voluntary
 * context switches. Per request, the number of wake-ups a request costs; unlike CPU time it does
 * not move with the machine's other load.
 */
export function sleepsOf(pid: number): number {
  let total = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      total += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    }
  } catch {
    return NaN;
  }
  return total;
}

/** /proc/<pid>/stat fields after the command name (which may contain spaces); undefined once gone. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

// Clock ticks per second (getconf CLK_TCK), 100 on every Linux we run on.
const TICKS = 100;

/** CPU seconds (user + system) the process has used so far. */
export function cpuSecondsOf(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / TICKS : NaN;
}

/**
 * Seconds the process's main thread spent RUNNABLE but waiting for a CPU (the second field of
 * /proc/<pid>/schedstat): on an oversubscribed machine this, not the api's own work, is latency.
 */
export function runQueueWaitSecondsOf(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds of a process and its children: its own, its exited children's (cutime + cstime,
 * which the kernel adds once they are reaped) and its live children's. For the postmaster this is
 * the whole database server, connections that came and went included.
 */
export function treeCpuSecondsOf(pid: number): number {
  const f = statFields(pid);
  if (!f) return NaN;
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = statFields(entry);
    if (child && Number(child[1]) === pid) ticks += Number(child[11]) + Number(child[12]);
  }
  return ticks / TICKS;
}
