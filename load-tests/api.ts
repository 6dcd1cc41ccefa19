/**
 * api benchmark (`npm run bench:api`): prints figures, asserts nothing.
 *
 * Real PostgreSQL (with pg_stat_statements) + NATS, the BUILT api (`tsc -b services/api`, then
 * `node services/api/dist/main.js`) and k6 (scripts/build-k6.sh) with the constant-arrival-rate
 * executor. The fleet is seeded with SQL (api-seed.ts): 1,000 ACTIVE agents × 5 stacks (label,
 * annotation and explicit-target matches, agents registered with the stacks' generator) × 3
 * deployment objects. For each endpoint agents and generators use (BENCH_TARGETS, all by default):
 *   target-state        GET /agents/{id}/target-state (agent PAK)
 *   deployment-objects  POST /stacks/{id}/deployment-objects (generator PAK, small YAML)
 *   agent-events        POST /agents/{id}/events (SUCCESS for an object the agent targets)
 *   heartbeat           POST /agents/{id}/heartbeat
 *   health-status       PATCH /agents/{id}/health-status (one object)
 *   work-orders         POST /work-orders (admin), then POST …/claim and …/complete by the agent
 *  1. a fixed arrival rate (BENCH_RATE for target-state, BENCH_WRITE_RATE for the writes; for
 *     work-orders iterations of three requests) for BENCH_SECONDS: latency, CPU per request split
 *     by process (api / PostgreSQL), PostgreSQL statements per request (BEGIN/COMMIT included);
 *  2. (BENCH_SEARCH) its highest arrival rate with p99 < 50 ms: BENCH_STEP_SECONDS steps up a ladder;
 *  3. RSS of the api process(es) when the load ends, BENCH_SETTLE_SECONDS (30) later, and at the peak.
 * With BROKKR_PEER_BROKER = Brokkr's broker binary, the same steps run against it in the same
 * run (its own database on the same server, its own network namespace: api-peer.ts) and the
 * table gets a ratio column (ours / Brokkr: CPU per request below 1 and rates above 1 are better).
 * Environment: BENCH_AGENTS (1000), BENCH_RATE (1000), BENCH_WRITE_RATE (250), BENCH_SECONDS (60),
 * BENCH_STEP_SECONDS (15), BENCH_WARMUP_SECONDS (10), BENCH_SETTLE_SECONDS (30), BENCH_TARGETS (comma list), BENCH_SEARCH
 * (1; 0 skips the ladders), BENCH_TWO_PROCESSES (1: the ladder again with 2 api processes for each of
 * BENCH_TWO_PROCESS_TARGETS, target-state by default; 0 skips it), BENCH_PROFILE (1: a closing --cpu-prof run on BENCH_PROFILE_TARGET,
 * deployment-objects by default, and the target-state SQL probe; 0 skips them; BENCH_PROFILE_OUT=file keeps the .cpuprofile), BENCH_API_MAIN
 * (another build's main.js, for A/B comparisons), BENCH_API_NODE_ARGS (node flags for our api processes
 * instead of those of the api's npm start script, e.g. V8 heap sizing), BENCH_PG_TRANSPORT (socket: PostgreSQL over its Unix
 * socket like Brokkr's side; tcp: loopback TCP), BENCH_ROUNDS (1; 2 measures each target twice, ours/Brokkr then
 * Brokkr/ours, and credits each side with its better round). A quick run:
 *   BENCH_AGENTS=200 BENCH_SECONDS=10 BENCH_SEARCH=0 BENCH_TWO_PROCESSES=0 BENCH_PROFILE=0 npm run bench:api
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TestClient } from '@brokkr/testkit';
import {
  DATABASE,
  heapOf,
  memoryOf,
  PEER_DATABASE,
  apiStartFlags,
  buildApi,
  spawnApi,
  startInfra,
  vacuumDatabase,
  type ApiBenchEnv,
  type ApiProcess,
} from './api-env.ts';
import { ensureK6, runStep, TARGETS, type StepResult, type Target } from './api-k6.ts';
import { peerStatus, PEER_ADMIN_PAK, spawnPeer, type PeerProcess } from './api-peer.ts';
import { profileApi } from './api-profile.ts';
import { probeTargetStateSql } from './api-sql-probe.ts';
import { betterRound, formatReport, machineLine, stepRow, type Report, type SideRound, type TargetFigures } from './api-report.ts';
import { mintPak, seedFleet, OBJECTS_PER_STACK, STACKS_PER_AGENT, type SeededFleet } from './api-seed.ts';
import { FIRST_RUNG, LADDER, searchMaxRate, type RateSearch } from './api-steps.ts';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const WRITE_RATE = Number(process.env.BENCH_WRITE_RATE ?? 250);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 15);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 30);
const TWO_PROCESSES = process.env.BENCH_TWO_PROCESSES !== '0';
const TWO_PROCESS_TARGETS = (process.env.BENCH_TWO_PROCESS_TARGETS ?? 'target-state').split(',').map((t) => t.trim()) as Target[];
const SEARCH = process.env.BENCH_SEARCH !== '0';
const PROFILE = process.env.BENCH_PROFILE !== '0';
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));
const PROFILE_TARGET = (process.env.BENCH_PROFILE_TARGET ?? 'deployment-objects') as Target;
const PEER_BROKER = process.env.BROKKR_PEER_BROKER;
/**
 * Node flags of our api processes: those of the api's `npm start` (services/api/package.json, what
 * operators run), or BENCH_API_NODE_ARGS for an A/B of V8 heap settings ("" for none).
 */
const API_NODE_ARGS = (process.env.BENCH_API_NODE_ARGS ?? apiStartFlags().join(' ')).split(' ').filter(Boolean);
const SELECTED: Target[] = process.env.BENCH_TARGETS
  ? (process.env.BENCH_TARGETS.split(',').map((t) => t.trim()) as Target[])
  : [...TARGETS];
for (const t of [...SELECTED, PROFILE_TARGET])
  if (!TARGETS.includes(t)) throw new Error(`unknown bench target ${t} (${TARGETS.join(', ')})`);

const log = (line: string) => process.stderr.write(`[bench:api] ${line}\n`);

/** One system under test: our api (1 or 2 processes) or Brokkr's broker. */
interface Side {
  name: string;
  procs: ApiProcess[];
  dataFile: string;
  database: string;
  adminPak: string;
  netnsPid?: number;
  /** Our side's nats-server: its CPU is part of what a request costs us. */
  natsPid?: number;
}

interface Bench {
  k6: string;
  env: ApiBenchEnv;
  postgresPid: number;
  dir: string;
  /** Stops what the run started besides our api processes (Brokkr's broker). */
  stops: (() => Promise<void>)[];
}

const rateOf = (target: Target) => (target === 'target-state' ? RATE : WRITE_RATE);

async function step(
  b: Bench,
  side: Side,
  procs: ApiProcess[],
  load: { target: Target; rate: number; seconds: number },
): Promise<StepResult> {
  const result = await runStep(b.k6, {
    ...load,
    urls: procs.map((p) => p.url),
    dataFile: side.dataFile,
    apiPids: procs.map((p) => p.pid),
    postgresPid: b.postgresPid,
    ...(side.natsPid ? { natsPid: side.natsPid } : {}),
    statements: { adminUrl: b.env.adminUrl, database: side.database },
    adminPak: side.adminPak,
    ...(side.netnsPid ? { netnsPid: side.netnsPid } : {}),
  });
  log(stepRow(result, ` ${side.name}`));
  if (load.target !== 'target-state') await vacuumDatabase(b.env.adminUrl, side.database);
  return result;
}

/** JIT, pool connections and the PAK cache warm up outside the measured steps. */
async function warmUp(b: Bench, side: Side, target: Target, procs: ApiProcess[]): Promise<void> {
  if (WARMUP_SECONDS <= 0) return;
  log(`warming up ${side.name} (${procs.length} process(es)) on ${target}`);
  await runStep(b.k6, {
    target,
    rate: Math.min(300, rateOf(target)),
    seconds: WARMUP_SECONDS,
    urls: procs.map((p) => p.url),
    dataFile: side.dataFile,
    apiPids: [],
    adminPak: side.adminPak,
    ...(side.netnsPid ? { netnsPid: side.netnsPid } : {}),
  });
  if (target !== 'target-state') await vacuumDatabase(b.env.adminUrl, side.database);
}

async function sanityCheck(url: string, fleet: SeededFleet): Promise<void> {
  const agent = fleet.agents[0]!;
  const res = await new TestClient(url, agent.pak).get<unknown[]>(`/agents/${agent.id}/target-state`);
  if (res.status !== 200 || res.body?.length !== STACKS_PER_AGENT) {
    throw new Error(`seed check: target-state answered ${res.status} with ${res.body?.length} objects, expected ${STACKS_PER_AGENT}`);
  }
}

async function measure(b: Bench, side: Side, target: Target): Promise<{ fixed: StepResult; search?: RateSearch }> {
  const one = side.procs.slice(0, 1);
  await warmUp(b, side, target, one);
  const fixed = await step(b, side, one, { target, rate: rateOf(target), seconds: SECONDS });
  if (!SEARCH) return { fixed };
  const search = await searchMaxRate((rate) => step(b, side, one, { target, rate, seconds: STEP_SECONDS }));
  return { fixed, search };
}

/** BENCH_PROFILE (on by default): where the api's CPU goes under load, and what the target-state query's planning costs. */
async function diagnose(b: Bench, side: Side, fleet: SeededFleet): Promise<string> {
  const rate = rateOf(PROFILE_TARGET);
  log(`profiling one api process (--cpu-prof) under ${PROFILE_TARGET} load`);
  const prof = await profileApi({
    k6: b.k6,
    env: b.env.apiEnv,
    dataFile: side.dataFile,
    target: PROFILE_TARGET,
    rate,
    seconds: 15,
    postgresPid: b.postgresPid,
    adminPak: side.adminPak,
  });
  const sql = await probeTargetStateSql(
    b.env.databaseUrl,
    fleet.agents.map((a) => a.id),
  );
  return [
    '',
    `diagnosis — ${sql}`,
    `CPU profile of one fresh api process, ${PROFILE_TARGET} at ${rate} req/s for 15 s:`,
    stepRow(prof.step),
    ...prof.summary,
    '',
  ].join('\n');
}

function build(): void {
  log('building the api (tsc -b services/api)');
  buildApi();
}

async function seedSide(databaseUrl: string, dataFile: string): Promise<SeededFleet> {
  const fleet = await seedFleet(databaseUrl, AGENTS);
  await writeFile(dataFile, JSON.stringify({ agents: fleet.agents, stacks: fleet.stacks, generatorPak: fleet.generatorPak }));
  return fleet;
}

async function startPeer(b: Bench, sides: Side[]): Promise<void> {
  if (!PEER_BROKER) return;
  log(`starting Brokkr's broker (${PEER_BROKER}) in its own network namespace`);
  const peer: PeerProcess = await spawnPeer(PEER_BROKER, b.env.peerSocketUrl);
  b.stops.push(() => peer.stop());
  const side: Side = {
    name: 'Brokkr',
    procs: [peer],
    dataFile: path.join(b.dir, 'peer-fleet.json'),
    database: PEER_DATABASE,
    adminPak: PEER_ADMIN_PAK,
    netnsPid: peer.netnsPid,
  };
  log(`seeding ${AGENTS} agents into Brokkr's database with SQL`);
  const fleet = await seedSide(b.env.peerDatabaseUrl, side.dataFile);
  const agent = fleet.agents[0]!;
  const status = await peerStatus(peer.netnsPid, `/api/v1/agents/${agent.id}/target-state`, agent.pak);
  if (status !== 200) throw new Error(`seed check: Brokkr's target-state answered ${status}`);
  sides.push(side);
}

/** The ladder again with a second api process, for each of BENCH_TWO_PROCESS_TARGETS: does a second process scale? */
async function twoProcesses(b: Bench, ours: Side, targets: TargetFigures[]): Promise<Report['searches']> {
  const chosen = TWO_PROCESS_TARGETS.filter((t) => SELECTED.includes(t));
  if (!TWO_PROCESSES || !SEARCH || chosen.length === 0) return [];
  ours.procs.push(await spawnApi(b.env.apiEnv, API_NODE_ARGS));
  const searches: Report['searches'] = [];
  for (const target of chosen) {
    await warmUp(b, ours, target, ours.procs);
    const single = targets.find((t) => t.target === target)?.sides[0]?.search?.max;
    const double = await searchMaxRate((rate) => step(b, ours, ours.procs, { target, rate, seconds: STEP_SECONDS }), single || FIRST_RUNG);
    searches.push({ label: `${target}, 2 api processes (round-robin)`, search: double });
  }
  return searches;
}

/**
 * RSS when the load ends and again after SETTLE_SECONDS of idleness, for every process of every
 * side: what a process keeps after a peak is the figure an operator lives with (ADR 0030).
 */
async function memoryAfterSettling(sides: Side[], ours: Side): Promise<Report['memory']> {
  const procs = sides.flatMap((side) => side.procs.map((p, i) => ({ side, p, label: `${side.name}#${i + 1}` })));
  const atEnd = procs.map(({ p }) => memoryOf(p.pid).rssMiB);
  log(`load over: reading RSS again after ${SETTLE_SECONDS} s idle`);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  return Promise.all(
    procs.map(async ({ side, p, label }, i) => {
      const heap = side === ours ? await heapOf(p.url) : undefined;
      return { label, endMiB: atEnd[i]!, ...memoryOf(p.pid), ...(heap ? { heap } : {}) };
    }),
  );
}

async function run(b: Bench, ours: Side, k6Version: string, loadBefore: number[]): Promise<string> {
  log(`seeding ${AGENTS} agents with SQL`);
  const fleet = await seedSide(b.env.databaseUrl, ours.dataFile);
  await sanityCheck(ours.procs[0]!.url, fleet);
  const sides: Side[] = [ours];
  await startPeer(b, sides);
  const targets: TargetFigures[] = [];
  for (const target of SELECTED) {
    // Round 1 ours then Brokkr, round 2 Brokkr then ours (ABBA): neither side always goes first.
    const rounds = new Map<Side, SideRound[]>(sides.map((side) => [side, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) rounds.get(side)!.push(await measure(b, side, target));
    }
    targets.push({
      target,
      sides: sides.map((side) => ({ side: side.name, ...betterRound(rounds.get(side)!), rounds: rounds.get(side)! })),
    });
  }
  const searches = await twoProcesses(b, ours, targets);
  const report: Report = {
    machine: machineLine(),
    k6Version,
    loadBefore,
    fleet:
      `${AGENTS} ACTIVE agents × ${STACKS_PER_AGENT} stacks (2 label, 2 annotation, 1 explicit target; agents registered with the generator) ` +
      `× ${OBJECTS_PER_STACK} objects (~1 KiB YAML) = ${fleet.objects} objects, seeded with SQL in ${fleet.seconds.toFixed(1)} s` +
      (sides.length > 1 ? '; Brokkr gets the same fleet in its own database on the same server' : ''),
    targets,
    searches,
    memory: await memoryAfterSettling(sides, ours),
    settleSeconds: SETTLE_SECONDS,
    notes: [
      `ours: node ${[...API_NODE_ARGS, process.env.BENCH_API_MAIN ?? 'services/api/dist/main.js'].join(' ')}, default pool (20 connections) per process, log level warn, PostgreSQL over ${process.env.BENCH_PG_TRANSPORT === 'tcp' ? 'loopback TCP' : 'the Unix socket'}; target-state answers are incremental`,
      ...(PEER_BROKER
        ? [`Brokkr: ${PEER_BROKER} serve, log level warn, in its own network namespace (k6 joins it), PostgreSQL over the Unix socket`]
        : []),
      `fixed steps: ${SECONDS} s at ${RATE} req/s (target-state) / ${WRITE_RATE} req/s (writes; work-orders: iterations of 3 requests), after a ${WARMUP_SECONDS} s warm-up`,
      ...(ROUNDS > 1 ? [`${ROUNDS} rounds per target (ours/Brokkr, then Brokkr/ours); the summary takes each side's better round`] : []),
      ...(SEARCH ? [`ladders: ${STEP_SECONDS} s steps on ${LADDER.join(', ')} req/s (from ${FIRST_RUNG} up; down only if it fails)`] : []),
    ],
  };
  let text = formatReport(report);
  if (PROFILE) text += await diagnose(b, ours, fleet);
  return text;
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const k6 = await ensureK6();
  build();
  const admin = mintPak();
  const env = await startInfra(admin.hash);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-bench-api-'));
  const b: Bench = { k6: k6.bin, env, postgresPid: env.postgresPid, dir, stops: [] };
  const ours: Side = {
    name: 'ours',
    procs: [],
    dataFile: path.join(dir, 'fleet.json'),
    database: DATABASE,
    adminPak: admin.pak,
    natsPid: env.natsPid,
  };
  try {
    ours.procs.push(await spawnApi(env.apiEnv, API_NODE_ARGS));
    process.stdout.write(await run(b, ours, k6.version, loadBefore));
  } finally {
    // The infra's guard processes are unref'd: without a timer the event loop could run dry while
    // we wait for them to exit, and `await main()` would never settle.
    const keepAlive = setInterval(() => undefined, 1000);
    await Promise.allSettled([...ours.procs.map((p) => p.stop()), ...b.stops.map((stop) => stop())]);
    await env.stop();
    await rm(dir, { recursive: true, force: true });
    clearInterval(keepAlive);
  }
}

await main();
