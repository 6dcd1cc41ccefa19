/**
 * `npm run bench:agents`: how many agents one api process holds, and how fast a change reaches
 * all of them. The real api, Postgres and NATS on this machine; simulated agents in this process:
 * WebSocket agents on /internal/ws/agent (a hint frame is "told"), long-poll agents holding
 * `GET target-state?wait=55` with their ETag (a 200 is "told"), and both mixed half and half.
 * For 1,000 / 5,000 / 10,000 connected agents: change → every agent told, p50/p99, when one stack
 * targeted by all of them gets a deployment object, and when 100 stacks (each targeted by 1/100 of
 * them) get one at once (BENCH_REPEATS times each); the api's RSS and CPU; and the time until all
 * of them are connected again after the api restarts. Targets: 10,000 agents on one process with
 * RSS < 512 MiB and change → every agent told p99 < 1 s.
 * Environment: BENCH_AGENT_COUNTS (1000,5000,10000), BENCH_MODES (ws,long-poll,mixed), BENCH_REPEATS (3).
 */
import { TestClient, freePort, spawnService, type RunningService } from '@brokkr/testkit';
import { eventuallyAll, LongPollSimAgent, processStats, seedAgents, WsSimAgent, type SimAgent } from './agents-support.ts';
import { adminPak, freshStack, KEY_HEX, machine, percentile, startPostgresServer, type Stack } from './webhooks-support.ts';

const COUNTS = (process.env.BENCH_AGENT_COUNTS ?? '1000,5000,10000').split(',').map(Number);
const MODES = (process.env.BENCH_MODES ?? 'ws,long-poll,mixed').split(',') as ('ws' | 'long-poll' | 'mixed')[];
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const SPREAD = 100;
const TOLD_TIMEOUT_MS = 30_000;
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Row {
  count: number;
  mode: string;
  connectS: number;
  rssMiB: number;
  peakMiB: number;
  idleCpuPct: number;
  one: { p50: number; p99: number; missed: number; cpuS: number };
  hundred: { p50: number; p99: number; missed: number; cpuS: number };
  reconnectS: number;
}

async function startApi(stack: Stack, port: number, hash: string): Promise<RunningService> {
  return spawnService({
    service: 'api',
    env: {
      BROKKR__DATABASE__URL: stack.dbUrl,
      BROKKR__NATS__URL: stack.natsUrl,
      BROKKR__BROKER__HOST: '127.0.0.1',
      BROKKR__BROKER__PORT: String(port),
      BROKKR__BROKER__PAK_HASH: hash,
      BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
      BROKKR__LOG__LEVEL: 'warn',
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    readyTimeoutMs: 180_000,
  });
}

/** Arms every agent, runs `change`, waits until all were told; latencies from the start of the change. */
async function measure(sims: SimAgent[], pid: number, change: () => Promise<void>) {
  const cpuBefore = processStats(pid).cpuSeconds;
  for (const s of sims) s.arm();
  const t0 = performance.now();
  await change();
  await eventuallyAll(() => sims.every((s) => s.hintedAt !== undefined), TOLD_TIMEOUT_MS);
  const latencies = sims.flatMap((s) => (s.hintedAt === undefined ? [] : [s.hintedAt - t0])).sort((a, b) => a - b);
  return { latencies, missed: sims.length - latencies.length, cpuS: processStats(pid).cpuSeconds - cpuBefore };
}

async function repeat(sims: SimAgent[], pid: number, change: () => Promise<void>) {
  const all: number[] = [];
  let missed = 0;
  let cpuS = 0;
  for (let i = 0; i < REPEATS; i++) {
    const r = await measure(sims, pid, change);
    all.push(...r.latencies);
    missed += r.missed;
    cpuS += r.cpuS;
    await new Promise((r) => setTimeout(r, 1000));
  }
  all.sort((a, b) => a - b);
  return { p50: percentile(all, 50), p99: percentile(all, 99), missed, cpuS: cpuS / REPEATS };
}

async function scenario(
  server: Awaited<ReturnType<typeof startPostgresServer>>,
  count: number,
  mode: 'ws' | 'long-poll' | 'mixed',
): Promise<Row> {
  const stack = await freshStack(server);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const { pak, hash } = adminPak();
  let api = await startApi(stack, port, hash);
  const sims: SimAgent[] = [];
  try {
    const admin = new TestClient(url, pak);
    const seeded = await seedAgents(stack.pool, count, SPREAD);
    seeded.agents.forEach((a, i) => {
      const ws = mode === 'ws' || (mode === 'mixed' && i % 2 === 0);
      sims.push(ws ? new WsSimAgent(url, a) : new LongPollSimAgent(url, a));
    });
    const connectStart = performance.now();
    for (let i = 0; i < sims.length; i += 250) {
      sims.slice(i, i + 250).forEach((s) => s.start());
      await eventuallyAll(() => sims.slice(0, i + 250).filter((s) => s.connected).length >= Math.min(i + 250, sims.length) * 0.9, 30_000);
    }
    await eventuallyAll(() => sims.every((s) => s.connected), 120_000);
    const connectS = (performance.now() - connectStart) / 1000;
    // Long-poll agents: their first answer is immediate; give them a moment to be held again.
    await new Promise((r) => setTimeout(r, 2000));
    const idleBefore = processStats(api.child.pid!).cpuSeconds;
    await new Promise((r) => setTimeout(r, 5000));
    const idleCpuPct = ((processStats(api.child.pid!).cpuSeconds - idleBefore) / 5) * 100;
    const pid = api.child.pid!;
    const deploy = (stackId: string) =>
      admin.must('POST', `/stacks/${stackId}/deployment-objects`, { yaml_content: `n: ${Math.random()}\n` });
    const one = await repeat(sims, pid, async () => void (await deploy(seeded.all)));
    const hundred = await repeat(sims, pid, async () => void (await Promise.all(seeded.spread.map(deploy))));
    const { rssMiB, peakMiB } = processStats(pid);

    // Restart: SIGTERM, a new process on the same port, until every agent is connected again.
    const restartStart = performance.now();
    await api.stop();
    for (const s of sims) if (s instanceof LongPollSimAgent) s.markDisconnected();
    api = await startApi(stack, port, hash);
    await eventuallyAll(() => sims.every((s) => s.connected), 180_000);
    const reconnectS = (performance.now() - restartStart) / 1000;
    return { count, mode, connectS, rssMiB, peakMiB, idleCpuPct, one, hundred, reconnectS };
  } finally {
    for (const s of sims) s.stop();
    await api.stop();
    await stack.close();
  }
}

/** One scenario with its progress line; a failure is reported and the run goes on. */
async function runScenario(server: Awaited<ReturnType<typeof startPostgresServer>>, count: number, mode: 'ws' | 'long-poll' | 'mixed') {
  log(`… ${count} ${mode} agents`);
  try {
    const row = await scenario(server, count, mode);
    log(
      `  connected in ${row.connectS.toFixed(1)} s, RSS ${row.rssMiB.toFixed(0)} MiB, one stack p99 ${ms(row.one.p99)} ms, ` +
        `100 stacks p99 ${ms(row.hundred.p99)} ms, reconnect ${row.reconnectS.toFixed(1)} s`,
    );
    return row;
  } catch (err) {
    log(`  FAILED: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)}` : '–');

log(`bench:agents on ${machine()}`);
log(`agents ${COUNTS.join(' / ')}; modes ${MODES.join(', ')}; ${REPEATS} changes per scenario; one api process\n`);
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

log(
  '\n| agents | mode | connect all (s) | api RSS / peak (MiB) | api CPU idle | 1 stack → all told p50 / p99 (ms) | api CPU per change (s) | 100 stacks → all told p50 / p99 (ms) | api CPU per change (s) | not told | restart → all reconnected (s) |',
);
log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  log(
    `| ${r.count} | ${r.mode} | ${r.connectS.toFixed(1)} | ${r.rssMiB.toFixed(0)} / ${r.peakMiB.toFixed(0)} | ${r.idleCpuPct.toFixed(1)} % | ` +
      `${ms(r.one.p50)} / ${ms(r.one.p99)} | ${r.one.cpuS.toFixed(2)} | ${ms(r.hundred.p50)} / ${ms(r.hundred.p99)} | ${r.hundred.cpuS.toFixed(2)} | ` +
      `${r.one.missed + r.hundred.missed} | ${r.reconnectS.toFixed(1)} |`,
  );
}
const tenK = rows.filter((r) => r.count === 10_000);
for (const r of tenK) {
  const ok = r.peakMiB < 512 && r.one.p99 < 1000 && r.hundred.p99 < 1000 && r.one.missed + r.hundred.missed === 0;
  log(`target (10,000 ${r.mode}: RSS < 512 MiB, p99 < 1 s, all told): ${ok ? 'met' : 'NOT met'}`);
}
