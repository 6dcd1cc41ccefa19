/**
 * Runs one k6 load step (load-tests/k6/api.ts) and reads its summary back. k6 is built from the Go
 * module proxy by scripts/build-k6.sh (cached under ~/.cache/brokkr/bin).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';
import { cpuSecondsOf, runQueueWaitSecondsOf, treeCpuSecondsOf } from './api-env.ts';

const exec = promisify(execFile);

export type Target = 'target-state' | 'deployment-objects';

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
  /** CPU of the api process(es) (summed), PostgreSQL and k6 over the step's duration, in % of ONE core. */
  apiCpu: number;
  pgCpu: number;
  k6Cpu: number;
  /** CPU milliseconds per completed request: robust to other load on the machine. */
  apiMsPerRequest: number;
  pgMsPerRequest: number;
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
  k6: number;
  apiWait: number;
}

function toResult(spec: StepSpec, summary: Summary, cpu: CpuSeconds): StepResult {
  const m = (name: string, value: string) => summary.metrics[name]?.values[value] ?? 0;
  const requests = m('http_reqs', 'count');
  const percent = (seconds: number) => (seconds / spec.seconds) * 100;
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
    // Divided by the load window only: k6's own start-up (VU set-up) slightly inflates its figure.
    apiCpu: percent(cpu.api),
    pgCpu: percent(cpu.pg),
    k6Cpu: percent(cpu.k6),
    apiMsPerRequest: (cpu.api * 1000) / requests,
    pgMsPerRequest: (cpu.pg * 1000) / requests,
    apiStarved: percent(cpu.apiWait),
  };
}

/** Samples the CPU seconds of k6 while it runs (its /proc entry is gone once it has exited). */
function trackK6Cpu(pid: number): { stop(): number } {
  const first = cpuSecondsOf(pid);
  let last = first;
  const timer = setInterval(() => {
    const now = cpuSecondsOf(pid);
    if (Number.isFinite(now)) last = now;
  }, 500);
  return {
    stop() {
      clearInterval(timer);
      return last - (Number.isFinite(first) ? first : 0);
    },
  };
}

export async function runStep(k6: string, spec: StepSpec): Promise<StepResult> {
  const summaryFile = `${spec.dataFile}.${spec.target}.${spec.rate}.${spec.urls.length}.summary.json`;
  const env = {
    ...process.env,
    BENCH_TARGET: spec.target,
    BENCH_RATE: String(spec.rate),
    BENCH_SECONDS: String(spec.seconds),
    BENCH_URLS: spec.urls.join(','),
    BENCH_DATA: spec.dataFile,
    BENCH_SUMMARY: summaryFile,
    K6_NO_USAGE_REPORT: 'true',
  };
  const script = path.join(repoRoot, 'load-tests', 'k6', 'api.ts');
  const apiCpu = () => spec.apiPids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
  const apiWait = () => spec.apiPids.reduce((sum, pid) => sum + runQueueWaitSecondsOf(pid), 0);
  const [apiBefore, waitBefore] = [apiCpu(), apiWait()];
  const pgBefore = spec.postgresPid ? treeCpuSecondsOf(spec.postgresPid) : NaN;
  const child = spawn(k6, ['run', '--quiet', '--no-color', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const k6Cpu = trackK6Cpu(child.pid!);
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const k6Seconds = k6Cpu.stop();
  const apiSeconds = apiCpu() - apiBefore;
  const waitSeconds = apiWait() - waitBefore;
  const pgSeconds = spec.postgresPid ? treeCpuSecondsOf(spec.postgresPid) - pgBefore : NaN;
  if (code !== 0) throw new Error(`k6 exited with ${code}:\n${output}`);
  const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as Summary;
  return toResult(spec, summary, { api: apiSeconds, pg: pgSeconds, k6: k6Seconds, apiWait: waitSeconds });
}
