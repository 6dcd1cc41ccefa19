/**
 * Progressive-rollout benchmark (`npm run bench:rollout`): the real api and maintenance,
 * Postgres and NATS on this machine, no Kubernetes. BENCH_AGENTS (200) simulated agents long-poll
 * their target state (If-None-Match + wait, as our agent does) and report every object they are
 * served: SUCCESS and healthy, except a "bad" object, which agents outside the first wave report as
 * FAILURE. The stack's policy has four waves (25/50/75/100 %, no soak).
 *
 * 1. Cost: target-state requests of 50 agents whose stack has no rollout and of 50 whose stack's
 *    rollout is paused after its first wave (the served object then depends on the rollout),
 *    five rounds each, alternating; medians of api CPU per request and latency, and the
 *    difference. Target: < 10 % added.
 * 2. Rollback: BENCH_ROUNDS (5) times, a bad object is published; the second wave fails its gate
 *    and the rollout rolls back. For every agent that was served the bad object, the time from the
 *    rollout's failure (finished_at, set by the deciding transaction) to the agent's long-poll
 *    answer serving the previous object again. Target: p99 < 2 s.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, spawnService, TestClient } from '@brokkr/testkit';
import { treeCpuSecondsOf } from './api-env.ts';
import { adminPak, freshStack, machine, percentile, spawnApi, startPostgresServer, waitFor, type Stack } from './webhooks-support.ts';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COST_REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 2000);
const POLICY = { waves: [25, 50, 75, 100].map((percent, i) => ({ name: `w${i + 1}`, percent, soak_seconds: 0 })), auto_rollback: true };

interface SimAgent {
  id: string;
  pak: string;
  /** The object this agent was last served, and when each object was first served to it. */
  served: string | undefined;
  seenAt: Map<string, number>;
}

async function spawnMaintenance(stack: Stack): Promise<void> {
  const port = await freePort();
  stack.services.push(
    await spawnService({
      service: 'maintenance',
      env: {
        BROKKR__DATABASE__URL: stack.dbUrl,
        BROKKR__NATS__URL: stack.natsUrl,
        BROKKR__HEALTH__PORT: String(port),
        BROKKR__LOG__LEVEL: 'warn',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    }),
  );
}

/** What the simulated agents share: the api, the bad objects and, per bad object, its first wave. */
interface World {
  url: string;
  bad: Set<string>;
  firstWave: Map<string, Set<string>>;
  stop: () => boolean;
}

/** Whether this agent reports the object as failed: a bad object, outside its rollout's first wave. */
async function fails(world: World, agentId: string, objectId: string): Promise<boolean> {
  if (!world.bad.has(objectId)) return false;
  while (!world.firstWave.has(objectId)) await new Promise((r) => setTimeout(r, 20));
  return !world.firstWave.get(objectId)!.has(agentId);
}

/** One agent: long-poll, report what it is served (FAILURE for a bad object outside wave 1). */
async function runAgent(world: World, agent: SimAgent): Promise<void> {
  let etag: string | undefined;
  const auth = { authorization: `Bearer ${agent.pak}` };
  while (!world.stop()) {
    const res = await fetch(`${world.url}/api/v1/agents/${agent.id}/target-state?mode=full&wait=5`, {
      headers: { ...auth, ...(etag ? { 'if-none-match': etag } : {}) },
    });
    if (res.status === 304) continue;
    etag = res.headers.get('etag') ?? undefined;
    const objects = (await res.json()) as { id: string }[];
    const id = objects[0]?.id;
    if (!id || id === agent.served) continue;
    agent.served = id;
    if (!agent.seenAt.has(id)) agent.seenAt.set(id, Date.now());
    const failed = await fails(world, agent.id, id);
    const event = {
      agent_id: agent.id,
      deployment_object_id: id,
      event_type: 'DEPLOY',
      status: failed ? 'FAILURE' : 'SUCCESS',
      message: 'bench',
    };
    const headers = { ...auth, 'content-type': 'application/json' };
    await fetch(`${world.url}/api/v1/agents/${agent.id}/events`, { method: 'POST', headers, body: JSON.stringify(event) });
    const health = { deployment_objects: [{ id, status: failed ? 'failing' : 'healthy', checked_at: new Date().toISOString() }] };
    await fetch(`${world.url}/api/v1/agents/${agent.id}/health-status`, { method: 'PATCH', headers, body: JSON.stringify(health) });
  }
}

/** The bench's own PostgreSQL server (NaN CPU figures when BROKKR__DATABASE__URL names an external one). */
function postmasterPid(dir: string | undefined): number {
  return dir ? Number(readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]) : NaN;
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Reads {
  /** api CPU ms per request. */
  cpu: number;
  /** PostgreSQL server CPU ms per request (every backend; maintenance's ticks included). */
  pg: number;
  p50: number;
  mean: number;
}

/** Per field, the median over rounds. */
function medianReads(runs: Reads[]): Reads {
  const median = (f: (r: Reads) => number) =>
    percentile(
      runs.map(f).sort((a, b) => a - b),
      50,
    );
  return { cpu: median((r) => r.cpu), pg: median((r) => r.pg), p50: median((r) => r.p50), mean: median((r) => r.mean) };
}

/** COST_REQUESTS plain target-state reads (no long-poll), 16 at a time; api CPU ms and latency per request. */
async function measureReads(url: string, agents: SimAgent[], pids: { api: number; pg: number }): Promise<Reads> {
  const latencies: number[] = [];
  const cpu0 = cpuMs(pids.api);
  const pg0 = treeCpuSecondsOf(pids.pg);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < COST_REQUESTS) {
        const agent = agents[next++ % agents.length]!;
        const t = performance.now();
        const res = await fetch(`${url}/api/v1/agents/${agent.id}/target-state?mode=full`, {
          headers: { authorization: `Bearer ${agent.pak}` },
        });
        await res.arrayBuffer();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return {
    cpu: (cpuMs(pids.api) - cpu0) / COST_REQUESTS,
    pg: ((treeCpuSecondsOf(pids.pg) - pg0) * 1000) / COST_REQUESTS,
    p50: percentile(sorted, 50),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

async function setUp(admin: TestClient, name: string, count: number): Promise<{ agents: SimAgent[]; stackId: string }> {
  const gen = (await admin.must<{ id: string; name: string }[]>('GET', '/generators')).find((g) => g.name === 'admin-generator')!;
  const stack = await admin.must<{ id: string }>('POST', '/stacks', { name, generator_id: gen.id });
  const agents: SimAgent[] = [];
  for (let i = 0; i < count; i++) {
    const res = await admin.must<{ agent: { id: string }; initial_pak: string }>('POST', '/agents', {
      name: `${name}-${i}`,
      cluster_name: 'bench',
      generator_ids: [gen.id],
    });
    await admin.must('PUT', `/agents/${res.agent.id}`, { status: 'ACTIVE' });
    await admin.must('POST', `/agents/${res.agent.id}/targets`, { agent_id: res.agent.id, stack_id: stack.id });
    agents.push({ id: res.agent.id, pak: res.initial_pak, served: undefined, seenAt: new Map() });
  }
  return { agents, stackId: stack.id };
}

const yaml = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "${v}"\n`;

const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;

/** The figures, and the targets met or missed. */
function report(plain: Reads, held: Reads, rollbackMs: number[]): string {
  const added = ((held.cpu + held.pg - plain.cpu - plain.pg) / (plain.cpu + plain.pg)) * 100;
  const addedLatency = ((held.mean - plain.mean) / plain.mean) * 100;
  const sorted = rollbackMs.sort((a, b) => a - b);
  const p99 = percentile(sorted, 99);
  return (
    [
      `target state, CPU per request (api + PostgreSQL): ${plain.cpu.toFixed(3)} + ${plain.pg.toFixed(3)} ms without a rollout, ${held.cpu.toFixed(3)} + ${held.pg.toFixed(3)} ms with one active (${signed(added)})`,
      `target state, mean latency: ${plain.mean.toFixed(2)} ms → ${held.mean.toFixed(2)} ms (${signed(addedLatency)}), p50 ${plain.p50.toFixed(2)} → ${held.p50.toFixed(2)} ms`,
      `failing gate → agent served the previous object: ${sorted.length} samples over ${ROUNDS} rollbacks, p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms`,
      `targets: rollback p99 < 2 s ${p99 < 2000 ? 'met' : 'MISSED'}; added target-state cost < 10 % ${added < 10 ? 'met' : 'MISSED'}`,
    ].join('\n') + '\n'
  );
}

/** The running api and what the two measurements use of it. */
interface Bench {
  url: string;
  stack: Stack;
  admin: TestClient;
  pids: { api: number; pg: number };
}

async function publishTo(b: Bench, stackId: string, v: string): Promise<string> {
  return (await b.admin.must<{ id: string }>('POST', `/stacks/${stackId}/deployment-objects`, { yaml_content: yaml(v) })).id;
}

async function rolloutOf(b: Bench, stackId: string) {
  const rollouts = await b.admin.must<{ id: string; status: string; finished_at: string | null; released_wave: number }[]>(
    'GET',
    `/stacks/${stackId}/rollouts`,
  );
  return rollouts[0]!;
}

/**
 * Cost: two groups of agents, one on a stack without a rollout, one on a stack whose rollout
 * is paused after its first wave; measured alternately (the machine's noise hits both alike).
 */
async function measureCost(b: Bench): Promise<{ plain: Reads; held: Reads }> {
  const plainGroup = await setUp(b.admin, 'plain', 50);
  const heldGroup = await setUp(b.admin, 'held', 50);
  await publishTo(b, plainGroup.stackId, '1');
  await publishTo(b, plainGroup.stackId, '2');
  await publishTo(b, heldGroup.stackId, '1');
  await b.admin.must('PUT', `/stacks/${heldGroup.stackId}/rollout-policy`, POLICY);
  await publishTo(b, heldGroup.stackId, '2');
  await waitFor(async () => (await rolloutOf(b, heldGroup.stackId)).status === 'progressing', 30_000, 'the rollout to start');
  await b.admin.must('POST', `/rollouts/${(await rolloutOf(b, heldGroup.stackId)).id}/pause`);
  await measureReads(b.url, plainGroup.agents, b.pids); // warm-up
  await measureReads(b.url, heldGroup.agents, b.pids);
  const plainRuns: Reads[] = [];
  const heldRuns: Reads[] = [];
  for (let round = 0; round < 5; round++) {
    plainRuns.push(await measureReads(b.url, plainGroup.agents, b.pids));
    heldRuns.push(await measureReads(b.url, heldGroup.agents, b.pids));
  }
  return { plain: medianReads(plainRuns), held: medianReads(heldRuns) };
}

/** Rollback: the main fleet on v2, then ROUNDS bad objects; per agent served one, ms from the rollout's failure to the baseline again. */
async function measureRollbacks(b: Bench): Promise<number[]> {
  const { agents, stackId } = await setUp(b.admin, 'rollout', AGENTS);
  const rollout = () => rolloutOf(b, stackId);
  const good = await publishTo(b, stackId, '1');
  await b.admin.must('PUT', `/stacks/${stackId}/rollout-policy`, POLICY);
  await publishTo(b, stackId, '2');

  let stopping = false;
  const world: World = { url: b.url, bad: new Set(), firstWave: new Map(), stop: () => stopping };
  // An agent whose request fails (the hub going away at the end) just stops.
  const running = Promise.all(
    agents.map((a) =>
      runAgent(world, a).catch((err: unknown) => {
        if (!stopping) process.stderr.write(`agent ${a.id} stopped: ${String(err)}\n`);
      }),
    ),
  );
  await waitFor(() => agents.every((a) => a.served !== undefined && a.served !== good), 60_000, 'every agent on v2');
  // A rollout superseded before it finished rolls the next one out from its own baseline.
  await waitFor(async () => (await rollout()).status === 'succeeded', 60_000, 'the v2 rollout to finish');
  const baseline = agents[0]!.served!;
  const rollbackMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) rollbackMs.push(...(await rollBackOnce(b, world, { agents, stackId, baseline, round })));
  stopping = true;
  await running.catch(() => undefined);
  return rollbackMs;
}

/** One bad object published, its rollout rolled back; the agents it reached, timed back to the baseline. */
async function rollBackOnce(
  b: Bench,
  world: World,
  fleet: { agents: SimAgent[]; stackId: string; baseline: string; round: number },
): Promise<number[]> {
  const { agents, stackId, baseline, round } = fleet;
  const rollout = () => rolloutOf(b, stackId);
  // Forget when the agents first got the baseline, so their return to it is timestamped.
  for (const a of agents) a.seenAt.delete(baseline);
  const id = await publishTo(b, stackId, `bad-${round}`);
  world.bad.add(id);
  await waitFor(async () => (await rollout()).status !== 'pending', 30_000, 'the waves to be assigned');
  const { rows } = await b.stack.pool.query<{ agent_id: string }>(
    'SELECT ra.agent_id FROM rollout_agents ra JOIN rollouts r ON r.id = ra.rollout_id WHERE r.deployment_object_id = $1 AND ra.wave = 0',
    [id],
  );
  world.firstWave.set(id, new Set(rows.map((r) => r.agent_id)));
  await waitFor(async () => (await rollout()).status === 'rolled_back', 120_000, `rollback ${round + 1}`);
  const failedAt = Date.parse((await rollout()).finished_at!);
  const hit = agents.filter((a) => a.seenAt.has(id));
  await waitFor(() => hit.every((a) => a.served === baseline), 60_000, 'every updated agent back on the previous object');
  return hit.map((a) => a.seenAt.get(baseline)! - failedAt);
}

async function main(): Promise<void> {
  process.stdout.write(`rollouts: ${AGENTS} simulated agents, 4 waves, ${ROUNDS} failing rollouts\nmachine: ${machine()}\n`);
  const server = await startPostgresServer();
  const stack = await freshStack(server);
  try {
    const { pak, hash } = adminPak();
    const url = await spawnApi(stack, hash);
    const pids = { api: stack.services[0]!.child.pid!, pg: postmasterPid(server.dir) };
    await spawnMaintenance(stack);
    const bench: Bench = { url, stack, admin: new TestClient(url, pak), pids };
    const { plain, held } = await measureCost(bench);
    const rollbackMs = await measureRollbacks(bench);
    process.stdout.write(report(plain, held, rollbackMs));
  } catch (err) {
    for (const service of stack.services)
      if (service.child.exitCode !== null) process.stderr.write(`a service exited:\n${service.output().slice(-4000)}\n`);
    throw err;
  } finally {
    await stack.close();
    await server.stop();
  }
}

await main();
