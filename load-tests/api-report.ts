/** The api benchmark's printed report: one row per k6 step, then the figures the issue asks for. */
import os from 'node:os';
import type { StepResult, Target } from './api-k6.ts';
import { holds, P99_LIMIT_MS, type RateSearch } from './api-steps.ts';

/** One endpoint's figures: ours first, then Brokkr's when BROKKR_PEER_BROKER ran too. */
export interface SideRound {
  fixed: StepResult;
  search?: RateSearch;
}

export interface TargetFigures {
  target: Target;
  /** Per side: its better round (lowest CPU at the fixed rate, highest rate held), and every round. */
  sides: (SideRound & { side: string; rounds: SideRound[] })[];
}

/** CPU milliseconds per request of every process a side needs: api, PostgreSQL and (ours) nats-server. */
const cpuMs = (s: StepResult) => s.apiMsPerRequest + s.pgMsPerRequest + (Number.isNaN(s.natsMsPerRequest) ? 0 : s.natsMsPerRequest);

/**
 * A side's figures over its rounds. Contention from the rest of the machine only ever makes a
 * round look worse, so each side is credited with its better round: the fixed step with the
 * lowest CPU per request and the highest rate it held in any round.
 */
export function betterRound(rounds: SideRound[]): SideRound {
  const fixed = rounds.reduce((a, b) => (cpuMs(b.fixed) < cpuMs(a.fixed) ? b : a)).fixed;
  const searches = rounds.flatMap((r) => (r.search ? [r.search] : []));
  const search = searches.length > 0 ? searches.reduce((a, b) => (b.max > a.max ? b : a)) : undefined;
  return search ? { fixed, search } : { fixed };
}

export interface Report {
  machine: string;
  k6Version: string;
  loadBefore: number[];
  fleet: string;
  targets: TargetFigures[];
  /** Extra ladders (two api processes). */
  searches: { label: string; search: RateSearch }[];
  /** RSS when the load ended, again SETTLE seconds later (idle), and the peak (VmHWM). */
  memory: { label: string; endMiB: number; rssMiB: number; peakMiB: number; heap?: string }[];
  settleSeconds: number;
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
/** nats-server's figures are NaN on Brokkr's side (it has no NATS). */
const orDash = (v: number, format: (v: number) => string) => (Number.isNaN(v) ? '—' : format(v));

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
  ['stmts', 6, (s) => s.statementsPerRequest.toFixed(1)],
  ['nats', 5, (s) => orDash(s.natsCpu, cpu)],
  ['ms/req', 7, (s) => orDash(s.natsMsPerRequest, (v) => v.toFixed(2))],
  ['sleeps', 7, (s) => s.apiSleepsPerRequest.toFixed(1)],
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
  'stmts: PostgreSQL statements per completed request (pg_stat_statements, BEGIN/COMMIT and background work included);',
  'nats: nats-server CPU (ours only: Brokkr uses no NATS); sleeps: times an api thread went to sleep per request (voluntary context switches, all threads).',
];

/** The contention-free bound: all cores busy with nothing but the api and PostgreSQL. */
function cpuBound(s: StepResult): string {
  const total = cpuMs(s);
  const cores = os.cpus().length;
  return (
    `   CPU per ${s.target} request: api ${s.apiMsPerRequest.toFixed(2)} ms + PostgreSQL ${s.pgMsPerRequest.toFixed(2)} ms + NATS ${s.natsMsPerRequest.toFixed(2)} ms; ` +
    `with ${cores} cores for nothing else, ≈ ${Math.round((cores * 1000) / total)} req/s at most ` +
    `(one api process alone caps at ≈ ${Math.round(1000 / s.apiMsPerRequest)} req/s)`
  );
}

const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

const ratio = (ours: number, peer: number | undefined) =>
  peer === undefined || !Number.isFinite(ours / peer) || peer === 0 ? '—' : `${(ours / peer).toFixed(2)}×`;

/** The comparison: per endpoint, ours and Brokkr's figures and ours / Brokkr. */
const SUMMARY: [
  string,
  number,
  (s: StepResult, search: RateSearch | undefined) => string,
  ((s: StepResult, search: RateSearch | undefined) => number)?,
][] = [
  ['p50', 9, (s) => ms(s.p50)],
  ['p99', 9, (s) => ms(s.p99), (s) => s.p99],
  ['api ms', 7, (s) => s.apiMsPerRequest.toFixed(2), (s) => s.apiMsPerRequest],
  ['pg ms', 7, (s) => s.pgMsPerRequest.toFixed(2), (s) => s.pgMsPerRequest],
  ['nats ms', 7, (s) => orDash(s.natsMsPerRequest, (v) => v.toFixed(2))],
  ['CPU ms', 7, (s) => cpuMs(s).toFixed(2), cpuMs],
  ['sleeps', 6, (s) => s.apiSleepsPerRequest.toFixed(1), (s) => s.apiSleepsPerRequest],
  ['stmts', 6, (s) => s.statementsPerRequest.toFixed(1), (s) => s.statementsPerRequest],
  ['errors', 7, (s) => pct(s.errorRate)],
  ['max/s', 7, (_, x) => (x ? String(x.max) : '—'), (_, x) => x?.max ?? NaN],
];

function comparisonTable(targets: TargetFigures[]): string[] {
  const head = [cell('endpoint', -19), cell('side', -7), cell('rate/s', 7), ...SUMMARY.map(([h, w]) => cell(h, w))].join(' ');
  const lines = [head];
  for (const t of targets) {
    const [ours, peer] = t.sides;
    for (const side of t.sides) {
      lines.push(
        [
          cell(t.target, -19),
          cell(side.side, -7),
          cell(String(side.fixed.rate), 7),
          ...SUMMARY.map(([, w, f]) => cell(f(side.fixed, side.search), w)),
        ].join(' '),
      );
    }
    if (ours && peer) {
      lines.push(
        [
          cell(t.target, -19),
          cell('ratio', -7),
          cell('', 7),
          ...SUMMARY.map(([, w, , v]) => cell(v ? ratio(v(ours.fixed, ours.search), v(peer.fixed, peer.search)) : '', w)),
        ].join(' '),
      );
    }
  }
  return lines;
}

export function formatReport(r: Report): string {
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
    ...r.targets.flatMap((t) =>
      t.sides.flatMap((side) =>
        side.rounds.flatMap((round, i) => {
          const label = side.rounds.length > 1 ? ` ${side.side} #${i + 1}` : ` ${side.side}`;
          return [stepRow(round.fixed, `${label} (fixed)`), ...(round.search?.steps ?? []).map((x) => stepRow(x, label))];
        }),
      ),
    ),
    ...r.searches.flatMap((s) => s.search.steps.map((x) => stepRow(x, ' ours ×2'))),
    '',
    `at the fixed rates (CPU ms = api + PostgreSQL + NATS CPU per request; sleeps = api thread sleeps per request; max/s = highest ladder rung with p99 < ${P99_LIMIT_MS} ms, errors and drops < 1%;`,
    'ratio = ours / Brokkr: below 1 is better for latency, CPU and statements, above 1 for max/s):',
    ...comparisonTable(r.targets),
    ...r.searches.map(({ label, search }) => `${label}: ${search.max > 0 ? `${search.max} req/s` : 'none of the rungs held'}`),
    ...r.targets.map((t) => cpuBound(t.sides[0]!.fixed)),
    `memory ${r.settleSeconds} s after the load (idle): ${r.memory
      .map(
        (m) =>
          `${m.label} RSS ${m.rssMiB.toFixed(0)} MiB (${m.endMiB.toFixed(0)} when the load ended, peak ${m.peakMiB.toFixed(0)} MiB${m.heap ? `; ${m.heap}` : ''})`,
      )
      .join(', ')}`,
    '',
  ];
  return lines.join('\n');
}
