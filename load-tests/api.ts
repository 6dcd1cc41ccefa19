/**
 * api benchmark (`npm run bench:api`): prints figures, asserts nothing.
 *
 * Real PostgreSQL + NATS, the BUILT api (`tsc -b services/api`, then `node services/api/dist/main.js`)
 * and k6 (scripts/build-k6.sh) with the constant-arrival-rate executor. The fleet is seeded with
 * SQL (api-seed.ts): 1,000 ACTIVE agents × 5 stacks (label, annotation and explicit-target
 * matches, agents registered with the stacks' generator) × 3 deployment objects.
 *  1. GET /agents/{id}/target-state, random agent with its own PAK, fixed 1,000 req/s for 60 s.
 *  2. Its highest arrival rate with p99 < 50 ms: 15 s steps up a ladder, 1 api process, then 2
 *     (k6 alternates between their ports: round-robin).
 *  3. The same for POST /stacks/{id}/deployment-objects (generator PAK, small YAML).
 *  4. RSS of the api processes at the end.
 * Environment: BENCH_AGENTS (1000), BENCH_RATE (1000), BENCH_SECONDS (60), BENCH_STEP_SECONDS (15),
 * BENCH_TWO_PROCESSES (1; 0 skips the two-process runs), BENCH_PROFILE (1: a closing --cpu-prof run and SQL probe; 0 skips them),
 * BENCH_API_MAIN (another build's main.js, for A/B comparisons).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';
import { TestClient } from '@brokkr/testkit';
import { memoryOf, spawnApi, startInfra, type ApiBenchEnv, type ApiProcess } from './api-env.ts';
import { ensureK6, runStep, type StepResult, type Target } from './api-k6.ts';
import { profileApi } from './api-profile.ts';
import { probeTargetStateSql } from './api-sql-probe.ts';
import { formatReport, machineLine, stepRow, type Report } from './api-report.ts';
import { mintPak, seedFleet, OBJECTS_PER_STACK, STACKS_PER_AGENT, type SeededFleet } from './api-seed.ts';
import { FIRST_RUNG, LADDER, searchMaxRate } from './api-steps.ts';

const exec = promisify(execFile);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 15);
const TWO_PROCESSES = process.env.BENCH_TWO_PROCESSES !== '0';
const PROFILE = process.env.BENCH_PROFILE !== '0';

const log = (line: string) => process.stderr.write(`[bench:api] ${line}\n`);

interface Bench {
  k6: string;
  dataFile: string;
  procs: ApiProcess[];
  postgresPid: number;
}

async function step(b: Bench, procs: ApiProcess[], load: { target: Target; rate: number; seconds: number }): Promise<StepResult> {
  const urls = procs.map((p) => p.url);
  const result = await runStep(b.k6, { ...load, urls, dataFile: b.dataFile, apiPids: procs.map((p) => p.pid), postgresPid: b.postgresPid });
  log(stepRow(result));
  return result;
}

/** JIT, pool connections and the PAK cache warm up outside the measured steps. */
async function warmUp(b: Bench, target: Target, procs: ApiProcess[]): Promise<void> {
  log(`warming up ${procs.length} process(es) on ${target}`);
  await runStep(b.k6, { target, rate: 300, seconds: 10, urls: procs.map((p) => p.url), dataFile: b.dataFile, apiPids: [] });
}

async function sanityCheck(url: string, fleet: SeededFleet): Promise<void> {
  const agent = fleet.agents[0]!;
  const res = await new TestClient(url, agent.pak).get<unknown[]>(`/agents/${agent.id}/target-state`);
  if (res.status !== 200 || res.body?.length !== STACKS_PER_AGENT) {
    throw new Error(`seed check: target-state answered ${res.status} with ${res.body?.length} objects, expected ${STACKS_PER_AGENT}`);
  }
}

async function measure(b: Bench, target: Target, one: ApiProcess[], two: ApiProcess[] | undefined) {
  await warmUp(b, target, one);
  const fixed = await step(b, one, { target, rate: RATE, seconds: SECONDS });
  const single = await searchMaxRate((rate) => step(b, one, { target, rate, seconds: STEP_SECONDS }));
  const searches = [{ label: `${target}, 1 api process`, search: single }];
  if (two) {
    await warmUp(b, target, two);
    // Start where one process topped out: the rungs below it are not the question.
    const double = await searchMaxRate((rate) => step(b, two, { target, rate, seconds: STEP_SECONDS }), single.max || FIRST_RUNG);
    searches.push({ label: `${target}, 2 api processes (round-robin)`, search: double });
  }
  return { fixed, searches };
}

/** BENCH_PROFILE (on by default): where the api's CPU goes under target-state load, and what the query's planning costs. */
async function diagnose(env: ApiBenchEnv, b: Bench, fleet: SeededFleet): Promise<string> {
  log('profiling one api process (--cpu-prof) under target-state load');
  const prof = await profileApi({
    k6: b.k6,
    env: env.apiEnv,
    dataFile: b.dataFile,
    target: 'target-state',
    rate: RATE,
    seconds: 15,
    postgresPid: b.postgresPid,
  });
  const sql = await probeTargetStateSql(
    env.databaseUrl,
    fleet.agents.map((a) => a.id),
  );
  return [
    '',
    `diagnosis — ${sql}`,
    `CPU profile of one fresh api process, target-state at ${RATE} req/s for 15 s:`,
    stepRow(prof.step),
    ...prof.summary,
    '',
  ].join('\n');
}

async function build(): Promise<void> {
  log('building the api (tsc -b services/api)');
  await exec(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-b', 'services/api'], { cwd: repoRoot });
}

async function run(env: ApiBenchEnv, b: Bench, k6Version: string, loadBefore: number[]): Promise<string> {
  log(`seeding ${AGENTS} agents with SQL`);
  const fleet = await seedFleet(env.databaseUrl, AGENTS);
  await writeFile(b.dataFile, JSON.stringify({ agents: fleet.agents, stacks: fleet.stacks, generatorPak: fleet.generatorPak }));
  await sanityCheck(b.procs[0]!.url, fleet);
  if (TWO_PROCESSES) b.procs.push(await spawnApi(env.apiEnv));
  const one = b.procs.slice(0, 1);
  const two = TWO_PROCESSES ? b.procs : undefined;
  const ts = await measure(b, 'target-state', one, two);
  const dobj = await measure(b, 'deployment-objects', one, two);
  const report: Report = {
    machine: machineLine(),
    k6Version,
    loadBefore,
    fleet:
      `${AGENTS} ACTIVE agents × ${STACKS_PER_AGENT} stacks (2 label, 2 annotation, 1 explicit target; agents registered with the generator) ` +
      `× ${OBJECTS_PER_STACK} objects (~1 KiB YAML) = ${fleet.objects} objects, seeded with SQL in ${fleet.seconds.toFixed(1)} s`,
    fixed: { targetState: ts.fixed, deploymentObjects: dobj.fixed },
    searches: [...ts.searches, ...dobj.searches],
    memory: b.procs.map((p, i) => ({ label: `api#${i + 1}`, ...memoryOf(p.pid) })),
    notes: [
      `api: node ${process.env.BENCH_API_MAIN ?? 'services/api/dist/main.js'}, default pool (20 connections) per process, log level warn; target-state answers are incremental (no events: 5 objects each)`,
      `steps: ${STEP_SECONDS} s each on the ladder ${LADDER.join(', ')} req/s (from ${FIRST_RUNG} up; down only if it fails), after a 10 s warm-up at 300 req/s; POSTs carry a ~90-byte ConfigMap`,
    ],
  };
  let text = formatReport(report);
  if (PROFILE) text += await diagnose(env, b, fleet);
  return text;
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const k6 = await ensureK6();
  await build();
  const admin = mintPak();
  const env = await startInfra(admin.hash);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-bench-api-'));
  const b: Bench = { k6: k6.bin, dataFile: path.join(dir, 'fleet.json'), procs: [], postgresPid: env.postgresPid };
  try {
    b.procs.push(await spawnApi(env.apiEnv));
    process.stdout.write(await run(env, b, k6.version, loadBefore));
  } finally {
    // The infra's guard processes are unref'd: without a timer the event loop could run dry while
    // we wait for them to exit, and `await main()` would never settle.
    const keepAlive = setInterval(() => undefined, 1000);
    await Promise.allSettled(b.procs.map((p) => p.stop()));
    await env.stop();
    await rm(dir, { recursive: true, force: true });
    clearInterval(keepAlive);
  }
}

await main();
