/**
 * Runs one k6 load step (load-tests/k6/api.ts) and reads its summary back. k6 is built from the Go
 * module proxy by scripts/build-k6.sh (cached under ~/.cache/brokkr/bin).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';
import { cpuSecondsOf, runQueueWaitSecondsOf, sleepsOf, statementsIn, treeCpuSecondsOf } from './api-env.ts';

const exec = promisify(execFile);

/** What one k6 iteration does (load-tests/k6/api.ts); `work-orders` is three requests: create, claim, complete. */
export const TARGETS = ['target-state', 'deployment-objects', 'agent-events', 'heartbeat', 'health-status', 'work-orders'] as const;
export type Target = (typeof TARGETS)[number];

export interface StepSpec {
  target: Target;
  rate: number;
  seconds: number;
  urls: string[];
  dataFile: string;
  /** api pids whose CPU use is reported for the step. */
  apiPids: number[];
  /** The postmaster, whose tree's CPU use is reported for the step. */
  postgresPid?: number;
  /** nats-server, whose CPU use is reported for the step (our side only: Brokkr's broker uses no NATS). */
  natsPid?: number;
  /** Counts the statements run in `database` over the step (pg_stat_statements, queried at `adminUrl`). */
  statements?: { adminUrl: string; database: string };
  /** k6 joins this process's network namespace (Brokkr's broker, api-peer.ts). */
  netnsPid?: number;
  /** The admin PAK (work-order creation); defaults to none. */
  adminPak?: string;
}

export interface StepResult {
  target: Target;
  processes: number;
  rate: number;
  seconds: number;
  requests: number;
  achievedRate: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  errorRate: number;
  dropped: number;
  /** CPU of the api process(es) (summed), PostgreSQL, nats-server (NaN when not ours) and k6 over the load window, in % of ONE core. */
  apiCpu: number;
  pgCpu: number;
  natsCpu: number;
  k6Cpu: number;
  /** CPU milliseconds per completed request: robust to other load on the machine. */
  apiMsPerRequest: number;
  pgMsPerRequest: number;
  natsMsPerRequest: number;
  /** Times an api thread went to sleep (voluntary context switches, all threads) per completed request. */
  apiSleepsPerRequest: number;
  /** PostgreSQL statements per completed request (NaN when not counted). */
  statementsPerRequest: number;
  /** Time the api main thread(s) waited for a CPU while runnable, in % of the step (summed). */
  apiStarved: number;
}

export async function ensureK6(): Promise<{ bin: string; version: string }> {
  const { stdout } = await exec('bash', [path.join(repoRoot, 'scripts', 'build-k6.sh')], { maxBuffer: 16 * 1024 * 1024 });
  const bin = stdout.trim().split('\n').pop()!;
  const version = (await exec(bin, ['version'])).stdout.trim();
  return { bin, version };
}

interface Summary {
  metrics: Record<string, { values: Record<string, number> } | undefined>;
}

interface CpuSeconds {
  api: number;
  pg: number;
  nats: number;
  k6: number;
  apiWait: number;
  apiSleeps: number;
}

function toResult(spec: StepSpec, summary: Summary, cpu: CpuSeconds & { seconds: number }, statements: number): StepResult {
  const m = (name: string, value: string) => summary.metrics[name]?.values[value] ?? 0;
  const requests = m('http_reqs', 'count');
  const percent = (seconds: number) => (seconds / cpu.seconds) * 100;
  return {
    target: spec.target,
    processes: spec.urls.length,
    rate: spec.rate,
    seconds: spec.seconds,
    requests,
    achievedRate: m('http_reqs', 'rate'),
    p50: m('http_req_duration', 'med'),
    p95: m('http_req_duration', 'p(95)'),
    p99: m('http_req_duration', 'p(99)'),
    max: m('http_req_duration', 'max'),
    errorRate: m('http_req_failed', 'rate'),
    dropped: m('dropped_iterations', 'count'),
    apiCpu: percent(cpu.api),
    pgCpu: percent(cpu.pg),
    natsCpu: percent(cpu.nats),
    k6Cpu: percent(cpu.k6),
    apiMsPerRequest: (cpu.api * 1000) / requests,
    pgMsPerRequest: (cpu.pg * 1000) / requests,
    natsMsPerRequest: (cpu.nats * 1000) / requests,
    apiSleepsPerRequest: cpu.apiSleeps / requests,
    statementsPerRequest: statements / requests,
    apiStarved: percent(cpu.apiWait),
  };
}

interface Counters {
  at: number;
  api: number;
  apiWait: number;
  apiSleeps: number;
  pg: number;
  nats: number;
  k6: number;
}

function snapshot(spec: StepSpec, k6Pid: number): Counters {
  const sum = (read: (pid: number) => number) => spec.apiPids.reduce((total, pid) => total + read(pid), 0);
  return {
    at: performance.now(),
    api: sum(cpuSecondsOf),
    apiWait: sum(runQueueWaitSecondsOf),
    apiSleeps: sum(sleepsOf),
    pg: spec.postgresPid ? treeCpuSecondsOf(spec.postgresPid) : NaN,
    nats: spec.natsPid ? cpuSecondsOf(spec.natsPid) : NaN,
    k6: cpuSecondsOf(k6Pid),
  };
}

const diff = (a: Counters, b: Counters): CpuSeconds & { seconds: number } => ({
  seconds: (b.at - a.at) / 1000,
  api: b.api - a.api,
  apiWait: b.apiWait - a.apiWait,
  apiSleeps: b.apiSleeps - a.apiSleeps,
  pg: b.pg - a.pg,
  nats: b.nats - a.nats,
  k6: b.k6 - a.k6,
});

/**
 * Runs k6 and samples the CPU counters at the script's setup/teardown markers, so they cover the
 * load window only.
 */
function runK6(
  k6: string,
  spec: StepSpec,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string; window?: ReturnType<typeof diff> }> {
  const script = path.join(repoRoot, 'load-tests', 'k6', 'api.ts');
  const args = ['run', '--quiet', '--no-color', script];
  // nsenter execs k6 in the broker's namespace: the pid stays k6's.
  const child = spawn(spec.netnsPid ? 'nsenter' : k6, spec.netnsPid ? ['-t', String(spec.netnsPid), '-n', k6, ...args] : args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let start: Counters | undefined;
  let window: ReturnType<typeof diff> | undefined;
  const onData = (c: Buffer) => {
    const text = c.toString();
    output = (output + text).slice(-20_000);
    if (!start && output.includes('BENCH_LOAD_START')) start = snapshot(spec, child.pid!);
    if (start && !window && output.includes('BENCH_LOAD_END')) window = diff(start, snapshot(spec, child.pid!));
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output, ...(window ? { window } : {}) })));
}

export async function runStep(k6: string, spec: StepSpec): Promise<StepResult> {
  const summaryFile = `${spec.dataFile}.${spec.target}.${spec.rate}.${spec.urls.length}.${spec.netnsPid ?? 0}.summary.json`;
  const env = {
    ...process.env,
    BENCH_TARGET: spec.target,
    BENCH_RATE: String(spec.rate),
    BENCH_SECONDS: String(spec.seconds),
    BENCH_URLS: spec.urls.join(','),
    BENCH_DATA: spec.dataFile,
    BENCH_SUMMARY: summaryFile,
    BENCH_ADMIN_PAK: spec.adminPak ?? '',
    K6_NO_USAGE_REPORT: 'true',
  };
  const count = () => (spec.statements ? statementsIn(spec.statements.adminUrl, spec.statements.database) : Promise.resolve(NaN));
  const before = await count();
  const { code, output, window } = await runK6(k6, spec, env);
  const statements = (await count()) - before;
  if (code !== 0 || !window) throw new Error(`k6 exited with ${code}${window ? '' : ' (no load-window markers)'}:\n${output}`);
  const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as Summary;
  return toResult(spec, summary, window, statements);
}
