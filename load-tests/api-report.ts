/** The api benchmark's printed report: one row per k6 step, then the figures the issue asks for. */
import os from 'node:os';
import type { StepResult } from './api-k6.ts';
import { holds, P99_LIMIT_MS, type RateSearch } from './api-steps.ts';

export interface Report {
  machine: string;
  k6Version: string;
  loadBefore: number[];
  fleet: string;
  fixed: { targetState: StepResult; deploymentObjects: StepResult };
  searches: { label: string; search: RateSearch }[];
  memory: { label: string; rssMiB: number; peakMiB: number }[];
  notes: string[];
}

const ms = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

export function machineLine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
}

const ok = (s: StepResult) => (holds(s) ? 'yes' : 'NO');
const cpu = (v: number) => `${v.toFixed(0)}%`;

/** Table columns: header, width, cell. */
const COLUMNS: [string, number, (s: StepResult, label: string) => string][] = [
  ['endpoint', -27, (s, label) => s.target + label],
  ['procs', 6, (s) => String(s.processes)],
  ['rate/s', 7, (s) => String(s.rate)],
  ['done/s', 7, (s) => s.achievedRate.toFixed(0)],
  ['p50', 9, (s) => ms(s.p50)],
  ['p95', 9, (s) => ms(s.p95)],
  ['p99', 9, (s) => ms(s.p99)],
  ['max', 9, (s) => ms(s.max)],
  ['errors', 7, (s) => pct(s.errorRate)],
  ['dropped', 8, (s) => String(s.dropped)],
  ['api CPU', 8, (s) => cpu(s.apiCpu)],
  ['ms/req', 7, (s) => s.apiMsPerRequest.toFixed(2)],
  ['starved', 8, (s) => cpu(s.apiStarved)],
  ['pg CPU', 7, (s) => cpu(s.pgCpu)],
  ['ms/req', 7, (s) => s.pgMsPerRequest.toFixed(2)],
  ['k6 CPU', 7, (s) => cpu(s.k6Cpu)],
  [`p99<${P99_LIMIT_MS}`, 8, (s) => ok(s)],
];

const cell = (text: string, width: number) => (width < 0 ? text.padEnd(-width) : text.padStart(width));
const HEADER = COLUMNS.map(([h, w]) => cell(h, w)).join(' ');

export function stepRow(s: StepResult, label = ''): string {
  return COLUMNS.map(([, w, f]) => cell(f(s, label), w)).join(' ');
}

const LEGEND = [
  'done/s: completed requests per second; dropped: iterations k6 could not start on time (no free VU: the api was too slow).',
  'api CPU / pg CPU / k6 CPU: % of ONE core over the step (api summed over its processes, pg = postmaster and all backends);',
  'ms/req: CPU milliseconds per completed request; starved: time the api main thread(s) were runnable but waiting for a core.',
];

/** The contention-free bound: all cores busy with nothing but the api and PostgreSQL. */
function cpuBound(s: StepResult): string {
  const total = s.apiMsPerRequest + s.pgMsPerRequest;
  const cores = os.cpus().length;
  return (
    `   CPU per ${s.target} request: api ${s.apiMsPerRequest.toFixed(2)} ms + PostgreSQL ${s.pgMsPerRequest.toFixed(2)} ms; ` +
    `with ${cores} cores for nothing else, ≈ ${Math.round((cores * 1000) / total)} req/s at most ` +
    `(one api process alone caps at ≈ ${Math.round(1000 / s.apiMsPerRequest)} req/s)`
  );
}

const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');

function fixedLine(n: number, s: StepResult): string {
  return `${n}. ${s.target} at a fixed ${s.rate} req/s for ${s.seconds} s, ${s.processes} process: p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, p99 ${ms(s.p99)}, errors ${pct(s.errorRate)}, dropped ${s.dropped}`;
}

function maxLines(searches: Report['searches']): string[] {
  return searches.map(
    ({ label, search }) =>
      `   ${label}: ${search.max > 0 ? `${search.max} req/s` : `none of the rungs held (lowest tried ${Math.min(...search.steps.map((s) => s.rate))} req/s)`}`,
  );
}

export function formatReport(r: Report): string {
  const ts = r.fixed.targetState;
  const bestTs = Math.max(0, ...r.searches.filter((s) => s.label.startsWith('target-state')).map((s) => s.search.max));
  const lines = [
    '',
    `api benchmark — ${r.machine}`,
    `load generator: ${r.k6Version}, constant-arrival-rate (open model), on the SAME cores as the api, PostgreSQL and NATS:`,
    '  they all compete for CPU, so these figures are a floor for the api, not its ceiling on dedicated hardware.',
    `load average before the run: ${loads(r.loadBefore)}, at the end: ${loads(os.loadavg())} (other work on the machine skews the figures)`,
    `fleet: ${r.fleet}`,
    ...r.notes,
    '',
    ...LEGEND,
    HEADER,
    stepRow(r.fixed.targetState, ' (fixed)'),
    ...r.searches.filter((s) => s.label.startsWith('target-state')).flatMap((s) => s.search.steps.map((x) => stepRow(x))),
    stepRow(r.fixed.deploymentObjects, ' (fixed)'),
    ...r.searches.filter((s) => s.label.startsWith('deployment-objects')).flatMap((s) => s.search.steps.map((x) => stepRow(x))),
    '',
    `${fixedLine(1, ts)}`,
    `   target p99 < 20 ms at 1,000 req/s: ${verdict(ts.p99 < 20 && holds(ts))}`,
    cpuBound(ts),
    `2. highest arrival rate with p99 < ${P99_LIMIT_MS} ms (errors < 1%, dropped < 1%):`,
    ...maxLines(r.searches.filter((s) => s.label.startsWith('target-state'))),
    `   target ≥ 3,000 req/s sustainable: ${verdict(bestTs >= 3000)}`,
    `${fixedLine(3, r.fixed.deploymentObjects)}`,
    cpuBound(r.fixed.deploymentObjects),
    ...maxLines(r.searches.filter((s) => s.label.startsWith('deployment-objects'))),
    `4. memory at the end: ${r.memory.map((m) => `${m.label} RSS ${m.rssMiB.toFixed(0)} MiB (peak ${m.peakMiB.toFixed(0)} MiB)`).join(', ')}`,
    '',
  ];
  return lines.join('\n');
}
