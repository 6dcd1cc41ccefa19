/**
 * `npm run bench:agents`: how many agents one api process holds, and how long it takes until every
 * one of them HOLDS a change. The real api, Postgres and NATS on this machine; simulated agents in
 * child processes (agents-sim.ts: one process may hold 20,000 open files, fewer than 2 × 10,000
 * agents need) that behave like ours: WebSocket agents on /internal/ws/agent that take the new
 * object from a `target_state_patch` frame, or else GET target-state (`mode=full`, If-None-Match)
 * after a hint, and resync every BENCH_WS_RESYNC_SECONDS while the channel is up (`ws-fetch`: the
 * same agents fetching after every hint, as ours did before patch frames); long-poll agents holding `GET target-state?mode=full&wait=55` with their ETag; and
 * both mixed half and half. For each count: change → every agent holds a target-state answer
 * containing the new object, p50/p99, when one stack targeted by all of them gets a deployment
 * object and when 100 stacks (each targeted by 1/100 of them) get one at once (BENCH_REPEATS times
 * each); beside it the old "told" figure (the hint frame, or the long-poll's 200, whatever it
 * held); the POSTs' answer time; api + PostgreSQL + nats-server CPU per change and target-state
 * answers per change; idle CPU per 1,000 connected agents; the api's RSS; and (BENCH_RESTART=1)
 * the time until all are connected again after the api restarts.
 * Targets (10,000 agents, one api process): holds p99 < 1 s over WebSocket, < 2 s over long-poll,
 * 100 stacks p99 < 2 s; idle < 5 % of a core; RSS < 512 MiB.
 * Environment: BENCH_AGENT_COUNTS (1000,5000,10000), BENCH_MODES (ws,long-poll,mixed; also ws-fetch), BENCH_REPEATS (3),
 * BENCH_WS_RESYNC_SECONDS (300, our agent's default), BENCH_RESTART (1),
 * BENCH_API_REPLICAS (1; 2: two api processes on the same PostgreSQL and NATS, agents split between
 * them, changes posted to the first, CPU summed, RSS of the larger),
 * BENCH_SIM_PROCESSES (the simulator processes, agent i in process i % P; default one per 9,000
 * agents, rounded up; their CPU per change is printed summed).
 */
import { TestClient, freePort } from '@brokkr/testkit';
import { apiStartFlags, buildApi, spawnApi, type ApiProcess } from './api-env.ts';
import { databaseReads, epochNow, natsServerPid, postmasterPid, processStats, seedAgents, treeCpuSeconds } from './agents-support.ts';
import { SimFleet, type SimAgentSpec } from './agents-sim.ts';
import { adminPak, freshStack, KEY_HEX, machine, percentile, startPostgresServer, type Stack } from './webhooks-support.ts';

const COUNTS = (process.env.BENCH_AGENT_COUNTS ?? '1000,5000,10000').split(',').map(Number);
type Mode = 'ws' | 'ws-fetch' | 'long-poll' | 'mixed';
const MODES = (process.env.BENCH_MODES ?? 'ws,long-poll,mixed').split(',') as Mode[];
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const SPREAD = 100;
const RESYNC_SECONDS = Number(process.env.BENCH_WS_RESYNC_SECONDS ?? 300);
const RESTART = process.env.BENCH_RESTART !== '0';
const HELD_TIMEOUT_MS = 60_000;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const REPLICAS = Number(process.env.BENCH_API_REPLICAS ?? 1);
/** One simulator process per this many agents unless BENCH_SIM_PROCESSES says how many. */
const AGENTS_PER_SIM_PROCESS = 9000;
const simProcesses = (count: number) => Number(process.env.BENCH_SIM_PROCESSES) || Math.ceil(count / AGENTS_PER_SIM_PROCESS);
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Change {
  postsMs: number;
  p50: number;
  p99: number;
  toldP99: number;
  missed: number;
  cpu: Cpu;
  answers: number;
  /** Of those, how many the api read with the full target-state query (the rest: memory, or patched from one read of the stack). */
  databaseReads: number;
}

/** CPU seconds of the api, PostgreSQL (postmaster and backends) and nats-server. */
interface Cpu {
  api: number;
  pg: number;
  nats: number;
}

interface Row {
  count: number;
  mode: string;
  connectS: number;
  rssMiB: number;
  peakMiB: number;
  /** % of one core per 1,000 connected agents, api + PostgreSQL + nats-server. */
  idlePctPer1k: number;
  idle: Cpu;
  one: Change;
  hundred: Change;
  reconnectS: number | undefined;
}

interface Pids {
  /** The api processes (BENCH_API_REPLICAS). */
  apis: () => number[];
  pg: number;
  nats: number;
  /** The apis' /metrics (where their target-state reads are counted). */
  metricsUrls: string[];
}

function cpuNow(pids: Pids): Cpu {
  const api = pids.apis().reduce((sum, pid) => sum + processStats(pid).cpuSeconds, 0);
  return { api, pg: treeCpuSeconds(pids.pg), nats: treeCpuSeconds(pids.nats) };
}

async function databaseReadsOf(pids: Pids): Promise<number> {
  const reads = await Promise.all(pids.metricsUrls.map(databaseReads));
  return reads.reduce((a, b) => a + b, 0);
}

/** Where the api's RSS is: V8's heap in use, external (Buffers), RSS, from its /metrics. */
async function memoryBreakdown(metricsUrl: string): Promise<string> {
  const text = await (await fetch(metricsUrl)).text();
  const mib = (name: string) => (Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20).toFixed(0);
  return `heap used ${mib('nodejs_heap_size_used_bytes')} MiB of ${mib('nodejs_heap_size_total_bytes')}, external ${mib('nodejs_external_memory_bytes')} MiB, RSS ${mib('process_resident_memory_bytes')} MiB`;
}

/** As many distinct free ports. */
async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

const cpuSince = (before: Cpu, after: Cpu): Cpu => ({
  api: after.api - before.api,
  pg: after.pg - before.pg,
  nats: after.nats - before.nats,
});
const cpuTotal = (c: Cpu) => c.api + c.pg + c.nats;

/** The built api with the flags of its `npm start`, as operators run it (tsx and its loader would add to the RSS). */
async function startApi(stack: Stack, port: number, hash: string): Promise<ApiProcess> {
  const env = {
    BROKKR__DATABASE__URL: stack.dbUrl,
    BROKKR__NATS__URL: stack.natsUrl,
    BROKKR__BROKER__HOST: '127.0.0.1',
    BROKKR__BROKER__PAK_HASH: hash,
    BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
    BROKKR__LOG__LEVEL: 'warn',
  };
  return spawnApi(env, apiStartFlags(), port);
}

/**
 * Arms every agent, runs `change` (it returns the objects: agent i must come to hold
 * `ids[i % ids.length]`), waits until all hold theirs; latencies from the start of the change.
 */
async function measure(fleet: SimFleet, pids: Pids, change: () => Promise<string[]>) {
  const cpuBefore = cpuNow(pids);
  const readsBefore = await databaseReadsOf(pids);
  await fleet.arm();
  const t0 = epochNow();
  const ids = await change();
  const postsMs = epochNow() - t0;
  const got = await fleet.collect(ids, HELD_TIMEOUT_MS);
  const since = (times: number[]) => times.map((t) => t - t0).sort((a, b) => a - b);
  const held = since(got.held);
  // The simulator processes share the machine's cores with the api: their lag counts against "holds".
  log(
    `    change: POSTs ${ms(postsMs)} ms, hold p50 ${ms(percentile(held, 50))} / p99 ${ms(percentile(held, 99))} / max ${ms(held.at(-1) ?? NaN)} ms, ` +
      `simulator CPU ${got.cpuSeconds.toFixed(2)} s (${fleet.processes} process${fleet.processes === 1 ? '' : 'es'})`,
  );
  return {
    postsMs,
    held,
    told: since(got.told),
    missed: got.missed,
    cpu: cpuSince(cpuBefore, cpuNow(pids)),
    answers: got.answers,
    databaseReads: (await databaseReadsOf(pids)) - readsBefore,
  };
}

async function repeat(fleet: SimFleet, pids: Pids, change: () => Promise<string[]>): Promise<Change> {
  const held: number[] = [];
  const told: number[] = [];
  let missed = 0;
  let postsMs = 0;
  let answers = 0;
  let reads = 0;
  const cpu: Cpu = { api: 0, pg: 0, nats: 0 };
  for (let i = 0; i < REPEATS; i++) {
    const r = await measure(fleet, pids, change);
    held.push(...r.held);
    told.push(...r.told);
    missed += r.missed;
    postsMs = Math.max(postsMs, r.postsMs);
    answers += r.answers;
    reads += r.databaseReads;
    for (const k of ['api', 'pg', 'nats'] as const) cpu[k] += r.cpu[k] / REPEATS;
    await new Promise((r) => setTimeout(r, 1000));
  }
  held.sort((a, b) => a - b);
  told.sort((a, b) => a - b);
  return {
    postsMs,
    p50: percentile(held, 50),
    p99: percentile(held, 99),
    toldP99: percentile(told, 99),
    missed,
    cpu,
    answers: answers / REPEATS,
    databaseReads: reads / REPEATS,
  };
}

/** Agent i: its kind by `mode`, served by api process i % REPLICAS. */
function simSpecs(agents: { id: string; pak: string }[], mode: Mode, urls: string[]): SimAgentSpec[] {
  return agents.map((a, index) => {
    const ws = mode === 'ws' || mode === 'ws-fetch' || (mode === 'mixed' && index % 2 === 0);
    return { index, kind: ws ? (mode === 'ws-fetch' ? 'ws-fetch' : 'ws') : 'long-poll', url: urls[index % urls.length]!, ...a };
  });
}

/** Seconds the api processes spent in V8's garbage collector (prom-client's nodejs_gc_duration_seconds). */
async function gcSeconds(metricsUrls: string[]): Promise<number> {
  let total = 0;
  for (const url of metricsUrls) {
    const text = await (await fetch(url)).text();
    for (const m of text.matchAll(/^nodejs_gc_duration_seconds_sum(?:\{[^}]*\})? (\S+)/gm)) total += Number(m[1]);
  }
  return total;
}

/** Idle CPU of api, PostgreSQL and NATS over IDLE_SECONDS, after SETTLE_SECONDS. */
async function measureIdle(pids: Pids, count: number): Promise<{ idle: Cpu; idlePctPer1k: number }> {
  // Every agent's first answer is immediate; give them a moment to be held (or quiet) again.
  // 10 s: 3 s after connecting 10,000 agents still counted their first fetches as idle (0.89 % of a
  // core per 1,000 agents against 0.20 % after 10 s, docs/perf/2026-11-27-fleet-holds.md).
  await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
  const idleBefore = cpuNow(pids);
  const gcBefore = await gcSeconds(pids.metricsUrls);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const idle = cpuSince(idleBefore, cpuNow(pids));
  const gc = (await gcSeconds(pids.metricsUrls)) - gcBefore;
  log(
    `  idle ${IDLE_SECONDS} s: api ${idle.api.toFixed(2)} (of which GC ${gc.toFixed(2)}) + PostgreSQL ${idle.pg.toFixed(2)} + NATS ${idle.nats.toFixed(2)} CPU-s`,
  );
  return { idle, idlePctPer1k: (cpuTotal(idle) / IDLE_SECONDS) * 100 * (1000 / count) };
}

/** The api processes' RSS and peak (the largest process's), with the first one's memory breakdown printed. */
async function apiMemory(pids: Pids): Promise<{ rssMiB: number; peakMiB: number }> {
  const stats = pids.apis().map((pid) => processStats(pid));
  log(`  api memory: ${await memoryBreakdown(pids.metricsUrls[0]!)}`);
  return { rssMiB: Math.max(...stats.map((st) => st.rssMiB)), peakMiB: Math.max(...stats.map((st) => st.peakMiB)) };
}

async function scenario(server: Awaited<ReturnType<typeof startPostgresServer>>, count: number, mode: Mode): Promise<Row> {
  const stack = await freshStack(server);
  const ports = await freePorts(REPLICAS);
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const { pak, hash } = adminPak();
  let apis = await Promise.all(ports.map((port) => startApi(stack, port, hash)));
  const fleet = new SimFleet(simProcesses(count));
  try {
    // Changes are posted to the first process; agent i is served by process i % REPLICAS.
    const admin = new TestClient(urls[0]!, pak);
    const seeded = await seedAgents(stack.pool, count, SPREAD);
    const deploy = async (stackId: string) =>
      (await admin.must<{ id: string }>('POST', `/stacks/${stackId}/deployment-objects`, { yaml_content: `n: ${Math.random()}\n` })).id;
    // Every stack starts with an object, so a measured change is a new version of something agents
    // hold (a stack's very first object is the rare case).
    await Promise.all([seeded.all, ...seeded.spread].map(deploy));
    const connectStart = epochNow();
    await fleet.connect(simSpecs(seeded.agents, mode, urls), RESYNC_SECONDS * 1000);
    const connectS = (epochNow() - connectStart) / 1000;
    const pids: Pids = {
      apis: () => apis.map((api) => api.child.pid!),
      pg: await postmasterPid(stack.pool),
      nats: natsServerPid(stack.natsUrl),
      metricsUrls: urls.map((url) => `${url}/metrics`),
    };
    const idle = await measureIdle(pids, count);
    const one = await repeat(fleet, pids, async () => [await deploy(seeded.all)]);
    // seedAgents: agent i targets spread[i % spread.length].
    const hundred = await repeat(fleet, pids, () => Promise.all(seeded.spread.map(deploy)));
    const memory = await apiMemory(pids);
    const reconnectS = RESTART ? await restart() : undefined;
    const label = REPLICAS > 1 ? `${mode}, ${REPLICAS} api processes` : mode;
    return { count, mode: label, connectS, ...memory, ...idle, one, hundred, reconnectS };
  } catch (err) {
    for (const api of apis)
      log(
        `  api exit code ${api.child.exitCode ?? '–'}, signal ${api.child.signalCode ?? '–'}; its last output:\n${api.output().slice(-3000)}`,
      );
    throw err;
  } finally {
    await fleet.stop();
    await Promise.all(apis.map((api) => api.stop()));
    await stack.close();
  }

  /** SIGTERM, new processes on the same ports, until every agent is connected again (seconds). */
  async function restart(): Promise<number> {
    const restartStart = epochNow();
    await Promise.all(apis.map((api) => api.stop()));
    await fleet.markDisconnected();
    apis = await Promise.all(ports.map((port) => startApi(stack, port, hash)));
    await fleet.allConnected(180_000);
    return (epochNow() - restartStart) / 1000;
  }
}

/** One scenario with its progress line; a failure is reported and the run goes on. */
async function runScenario(server: Awaited<ReturnType<typeof startPostgresServer>>, count: number, mode: Mode) {
  log(`… ${count} ${mode} agents`);
  try {
    const row = await scenario(server, count, mode);
    log(
      `  connected in ${row.connectS.toFixed(1)} s, RSS ${row.rssMiB.toFixed(0)} MiB, one stack → all hold p99 ${ms(row.one.p99)} ms, ` +
        `100 stacks → all hold p99 ${ms(row.hundred.p99)} ms${row.reconnectS === undefined ? '' : `, reconnect ${row.reconnectS.toFixed(1)} s`}`,
    );
    return row;
  } catch (err) {
    log(`  FAILED: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)}` : '–');

log(`bench:agents on ${machine()}`);
log(
  `agents ${COUNTS.join(' / ')}; modes ${MODES.join(', ')}; ${REPEATS} changes per scenario; ${REPLICAS === 1 ? 'one api process' : `${REPLICAS} api processes`}; ` +
    `simulator processes ${COUNTS.map(simProcesses).join(' / ')}; WebSocket agents resync every ${RESYNC_SECONDS} s ±20 %\n`,
);
log('building the api (tsc -b services/api)');
buildApi();
const server = await startPostgresServer();
const rows: Row[] = [];
try {
  for (const [count, mode] of COUNTS.flatMap((c) => MODES.map((m) => [c, m] as const))) {
    const row = await runScenario(server, count, mode);
    if (row) rows.push(row);
  }
} finally {
  await server.stop();
}

const cpuCell = (c: Cpu) => `${c.api.toFixed(2)} + ${c.pg.toFixed(2)} + ${c.nats.toFixed(2)}`;
const changeCells = (c: Change) =>
  `${ms(c.postsMs)} | ${ms(c.p50)} / **${ms(c.p99)}** | ${ms(c.toldP99)} | ${cpuCell(c.cpu)} | ${c.answers.toFixed(0)} / ${c.databaseReads.toFixed(0)}`;
log(
  '\n| agents | mode | change | POSTs answered (ms) | all hold p50 / p99 (ms) | "told" p99 (ms, hint frame / any 200) | ' +
    'CPU per change, api + PostgreSQL + NATS (s) | target-state answers per change / of them read from the database | idle CPU per 1,000 agents (% of a core) | api RSS / peak (MiB) | connect all (s) | not held | restart → all reconnected (s) |',
);
log('|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const tail = `${r.idlePctPer1k.toFixed(2)} % | ${r.rssMiB.toFixed(0)} / ${r.peakMiB.toFixed(0)} | ${r.connectS.toFixed(1)}`;
  const restart = r.reconnectS === undefined ? '–' : r.reconnectS.toFixed(1);
  log(`| ${r.count} | ${r.mode} | one stack held by all | ${changeCells(r.one)} | ${tail} | ${r.one.missed} | ${restart} |`);
  log(`| ${r.count} | ${r.mode} | 100 stacks at once | ${changeCells(r.hundred)} | ${tail} | ${r.hundred.missed} | ${restart} |`);
}
for (const r of rows.filter((r) => r.count === 10_000)) {
  const holdLimit = r.mode.startsWith('long-poll') ? 2000 : 1000;
  const ok =
    r.peakMiB < 512 &&
    r.one.p99 < holdLimit &&
    r.hundred.p99 - r.hundred.postsMs < 2000 &&
    r.hundred.postsMs < 1000 &&
    r.idlePctPer1k * 10 < 5 &&
    r.one.missed + r.hundred.missed === 0;
  log(
    `target (10,000 ${r.mode}: all hold p99 < ${holdLimit / 1000} s, 100 stacks < 2 s after the POSTs and POSTs < 1 s, idle < 5 % of a core, RSS < 512 MiB): ${ok ? 'met' : 'NOT met'}`,
  );
}
