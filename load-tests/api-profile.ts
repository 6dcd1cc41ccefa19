/**
 * Where an api process spends its CPU (bench:api's closing diagnosis): one extra api process under
 * `node --cpu-prof`, a short k6 step against it, then the V8 profile written at exit summed by
 * self time, per package/area and per function.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnApi } from './api-env.ts';
import { runStep, type StepResult, type Target } from './api-k6.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<pkg>, @brokkr/<x>, the api's own files, node internals, or V8's pseudo-frames. */
function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : 'native / V8';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const api = /services\/api\/dist\/(.+)\.js$/.exec(url);
  if (api) return `api ${api[1]}`;
  const shared = /shared\/([^/]+)\/dist\//.exec(url);
  if (shared) return `@brokkr/${shared[1]}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/').slice(0, 2).join('/')}`;
  return url;
}

function top(map: Map<string, number>, total: number, count: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, v]) => `    ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

/** Samples per node id, counting only the last `windowSeconds` of the profile (start-up left out). */
function hitsInWindow(profile: CpuProfile, windowSeconds: number): { hits: Map<number, number>; samples: number } {
  const hits = new Map<number, number>();
  const from = profile.endTime - windowSeconds * 1e6;
  let t = profile.startTime;
  let samples = 0;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    if (t < from) return;
    samples++;
    hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  return { hits, samples };
}

export function summarizeProfile(profile: CpuProfile, windowSeconds: number): string[] {
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const window = hitsInWindow(profile, windowSeconds);
  let total = 0;
  for (const node of profile.nodes) {
    const hits = window.hits.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (hits === 0 || functionName === '(idle)') continue;
    total += hits;
    const area = areaOf(url, functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + hits);
    const fn = `${functionName || '(anonymous)'}  ${area}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  }
  const busy = window.samples ? (total / window.samples) * 100 : 0;
  return [
    `  the api thread was busy ${busy.toFixed(0)}% of the load window (the rest idle, waiting on I/O); self time by area:`,
    ...top(byArea, total, 12),
    '  hottest functions (self time):',
    ...top(byFunction, total, 15),
  ];
}

export async function profileApi(options: {
  k6: string;
  env: Record<string, string>;
  dataFile: string;
  target: Target;
  rate: number;
  seconds: number;
  postgresPid?: number;
  adminPak?: string;
}): Promise<{ step: StepResult; summary: string[] }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-api-prof-'));
  try {
    const api = await spawnApi(options.env, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    let step: StepResult;
    try {
      const { k6, env: _env, ...load } = options;
      step = await runStep(k6, { ...load, urls: [api.url], apiPids: [api.pid] });
    } finally {
      await api.stop();
    }
    const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'));
    if (!file) return { step, summary: ['  (no profile written)'] };
    const text = await readFile(path.join(dir, file), 'utf8');
    // BENCH_PROFILE_OUT keeps the raw profile (Chrome DevTools / speedscope open it) for a closer look.
    if (process.env.BENCH_PROFILE_OUT) await writeFile(process.env.BENCH_PROFILE_OUT, text);
    const profile = JSON.parse(text) as CpuProfile;
    // The api is stopped right after k6 exits: the last `seconds` of the profile are the load.
    return { step, summary: summarizeProfile(profile, options.seconds) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
