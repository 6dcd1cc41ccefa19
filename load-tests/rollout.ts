/**
 * Progressive-rollout benchmark (`npm run bench:rollout`): the real api and maintenance,
 * Postgres and NATS on this machine, no Kubernetes. BENCH_AGENTS (200) simulated agents long-poll
 * their target state (If-None-Match + wait, as our agent does) and report every object they are
 * served: SUCCESS and healthy, except a "bad" object, which agents outside the first wave report as
 * FAILURE. The stack's policy has four waves (25/50/75/100 %, no soak).
 *
 * 1. Cost: target-state requests for agents whose stack has no rollout, then the same agents
 *    while a rollout of their stack is paused half-way (the served object then depends on the
 *    rollout); api CPU per request and latency, and the difference. Target: < 10 % added.
 * 2. Rollback: BENCH_ROUNDS (5) times, a bad object is published; the second wave fails its gate
 *    and the rollout rolls back. For every agent that was served the bad object, the time from the
 *    rollout's failure (finished_at, set by the deciding transaction) to the agent's long-poll
 *    answer serving the previous object again. Target: p99 < 2 s.
 */
import { readFileSync } from 'node:fs';
import { freePort, spawnService, TestClient } from '@brokkr/testkit';
import { adminPak, freshStack, machine, percentile, spawnApi, startPostgresServer, waitFor, type Stack } from './webhooks-support.ts';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COST_REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 4000);
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

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** COST_REQUESTS plain target-state reads (no long-poll), 16 at a time; api CPU ms and latency per request. */
async function measureReads(url: string, agents: SimAgent[], pid: number): Promise<{ cpu: number; p50: number; mean: number }> {
  const latencies: number[] = [];
  const cpu0 = cpuMs(pid);
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
  return { cpu: (cpuMs(pid) - cpu0) / COST_REQUESTS, p50: percentile(sorted, 50), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

async function setUp(admin: TestClient): Promise<{ agents: SimAgent[]; stackId: string; genId: string }> {
  const gen = (await admin.must<{ id: string; name: string }[]>('GET', '/generators')).find((g) => g.name === 'admin-generator')!;
  const stack = await admin.must<{ id: string }>('POST', '/stacks', { name: 'bench-rollout', generator_id: gen.id });
  const agents: SimAgent[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const res = await admin.must<{ agent: { id: string }; initial_pak: string }>('POST', '/agents', {
      name: `rollout-${i}`,
      cluster_name: 'bench',
    });
    await admin.must('PUT', `/agents/${res.agent.id}`, { status: 'ACTIVE' });
    await admin.must('POST', `/agents/${res.agent.id}/targets`, { agent_id: res.agent.id, stack_id: stack.id });
    agents.push({ id: res.agent.id, pak: res.initial_pak, served: undefined, seenAt: new Map() });
  }
  return { agents, stackId: stack.id, genId: gen.id };
}

const yaml = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: "${v}"\n`;

async function main(): Promise<void> {
  process.stdout.write(`rollouts: ${AGENTS} simulated agents, 4 waves, ${ROUNDS} failing rollouts\nmachine: ${machine()}\n`);
  const server = await startPostgresServer();
  const stack = await freshStack(server);
  try {
    const { pak, hash } = adminPak();
    const url = await spawnApi(stack, hash);
    const apiPid = stack.services[0]!.child.pid!;
    await spawnMaintenance(stack);
    const admin = new TestClient(url, pak);
    const { agents, stackId } = await setUp(admin);
    const publish = async (v: string) =>
      (await admin.must<{ id: string }>('POST', `/stacks/${stackId}/deployment-objects`, { yaml_content: yaml(v) })).id;
    const rollout = async () =>
      (
        await admin.must<{ id: string; status: string; finished_at: string | null; released_wave: number }[]>(
          'GET',
          `/stacks/${stackId}/rollouts`,
        )
      )[0]!;

    const good = await publish('1');
    await measureReads(url, agents, apiPid); // warm-up
    const plain = await measureReads(url, agents, apiPid);
    await admin.must('PUT', `/stacks/${stackId}/rollout-policy`, POLICY);
    await publish('2');
    await waitFor(async () => (await rollout()).status === 'progressing', 30_000, 'the rollout to start');
    await admin.must('POST', `/rollouts/${(await rollout()).id}/pause`);
    const held = await measureReads(url, agents, apiPid);
    await admin.must('POST', `/rollouts/${(await rollout()).id}/promote`);
    const added = ((held.cpu - plain.cpu) / plain.cpu) * 100;
    const addedLatency = ((held.mean - plain.mean) / plain.mean) * 100;

    let stopping = false;
    const world: World = { url, bad: new Set(), firstWave: new Map(), stop: () => stopping };
    const running = Promise.all(agents.map((a) => runAgent(world, a)));
    await waitFor(() => agents.every((a) => a.served !== undefined && a.served !== good), 60_000, 'every agent on v2');
    const baseline = agents[0]!.served!;
    const rollbackMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Forget when the agents first got the baseline, so their return to it is timestamped.
      for (const a of agents) a.seenAt.delete(baseline);
      const id = await publish(`bad-${round}`);
      world.bad.add(id);
      await waitFor(async () => (await rollout()).status !== 'pending', 30_000, 'the waves to be assigned');
      const { rows } = await stack.pool.query<{ agent_id: string }>(
        'SELECT ra.agent_id FROM rollout_agents ra JOIN rollouts r ON r.id = ra.rollout_id WHERE r.deployment_object_id = $1 AND ra.wave = 0',
        [id],
      );
      world.firstWave.set(id, new Set(rows.map((r) => r.agent_id)));
      await waitFor(async () => (await rollout()).status === 'rolled_back', 120_000, `rollback ${round + 1}`);
      const failedAt = Date.parse((await rollout()).finished_at!);
      const hit = agents.filter((a) => a.seenAt.has(id));
      await waitFor(() => hit.every((a) => a.served === baseline), 60_000, 'every updated agent back on the previous object');
      for (const a of hit) rollbackMs.push(a.seenAt.get(baseline)! - failedAt);
    }
    stopping = true;
    await running.catch(() => undefined);

    const sorted = rollbackMs.sort((a, b) => a - b);
    const p99 = percentile(sorted, 99);
    process.stdout.write(
      [
        `target state, api CPU per request: ${plain.cpu.toFixed(3)} ms without a rollout, ${held.cpu.toFixed(3)} ms with one active (${added >= 0 ? '+' : ''}${added.toFixed(1)} %)`,
        `target state, mean latency: ${plain.mean.toFixed(2)} ms → ${held.mean.toFixed(2)} ms (${addedLatency >= 0 ? '+' : ''}${addedLatency.toFixed(1)} %), p50 ${plain.p50.toFixed(2)} → ${held.p50.toFixed(2)} ms`,
        `failing gate → agent served the previous object: ${sorted.length} samples over ${ROUNDS} rollbacks, p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms`,
        `targets: rollback p99 < 2 s ${p99 < 2000 ? 'met' : 'MISSED'}; added target-state cost < 10 % ${added < 10 ? 'met' : 'MISSED'}`,
      ].join('\n') + '\n',
    );
  } finally {
    await stack.close();
    await server.stop();
  }
}

await main();
