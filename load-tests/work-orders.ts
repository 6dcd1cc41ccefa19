/**
 * Work-order benchmark (`npm run bench:work-orders`): the real api, Postgres and NATS on this
 * machine, no Kubernetes. 50 simulated agents (HTTP clients with their own agent PAKs) long-poll
 * `GET /agents/{id}/work-orders/pending?wait=30`, claim what they find and complete it at once.
 * An admin client creates orders open-loop at BENCH_RATE/s for BENCH_SECONDS, each targeted at
 * BENCH_TARGETS agents by id (the create wakes them through `brokkr.notify.agent.<id>`).
 * Reported: orders/s from the first create to the last completion (create → COMPLETED through the
 * API), claim request p50/p99, and create → claimed p50/p99 (the order's created_at, set in the
 * committing transaction, to the claim's 200 at the agent).
 * Targets: create → claimed p99 < 250 ms; ≥ 500 orders/s end to end.
 * Environment: BENCH_AGENTS (50), BENCH_RATE (500), BENCH_SECONDS (10), BENCH_TARGETS (1).
 */
import { TestClient } from '@brokkr/testkit';
import { adminPak, freshStack, machine, percentile, spawnApi, startPostgresServer, waitFor } from './webhooks-support.ts';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 50);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TARGETS = Number(process.env.BENCH_TARGETS ?? 1);

interface Stats {
  claimMs: number[];
  createToClaimedMs: number[];
  completed: number;
  lastCompletedAt: number;
  lostRaces: number;
  errors: number;
}

interface SimAgent {
  id: string;
  client: TestClient;
}

async function createAgents(admin: TestClient): Promise<SimAgent[]> {
  const agents: SimAgent[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const res = await admin.must<{ agent: { id: string }; initial_pak: string }>('POST', '/agents', {
      name: `bench-agent-${i}`,
      cluster_name: 'bench',
    });
    agents.push({ id: res.agent.id, client: admin.as(res.initial_pak) });
  }
  return agents;
}

/** One agent: long-poll, claim, complete, until `stop`. */
async function runAgent(agent: SimAgent, stats: Stats, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const pending = await agent.client.get<{ id: string; created_at: string }[]>(`/agents/${agent.id}/work-orders/pending`, {
      query: { wait: 2 },
    });
    if (pending.status !== 200) {
      stats.errors++;
      continue;
    }
    for (const order of pending.body) {
      const sent = performance.now();
      const claim = await agent.client.post(`/work-orders/${order.id}/claim`, { agent_id: agent.id });
      if (claim.status === 404) {
        stats.lostRaces++;
        continue;
      }
      if (claim.status !== 200) {
        stats.errors++;
        continue;
      }
      stats.claimMs.push(performance.now() - sent);
      stats.createToClaimedMs.push(Date.now() - Date.parse(order.created_at));
      const done = await agent.client.post(`/work-orders/${order.id}/complete`, { success: true, message: 'bench' });
      if (done.status === 200) {
        stats.completed++;
        stats.lastCompletedAt = Date.now();
      } else stats.errors++;
    }
  }
}

/** Open loop: order i is created at its scheduled time whatever the earlier ones are doing. */
async function createOrders(admin: TestClient, agents: SimAgent[], count: number): Promise<{ failures: number; achieved: number }> {
  const start = Date.now();
  const inFlight: Promise<unknown>[] = [];
  let failures = 0;
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / RATE - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const targets = Array.from({ length: TARGETS }, (_, k) => agents[(i + k * 7) % agents.length]!.id);
    inFlight.push(
      admin
        .post('/work-orders', { work_type: 'custom', yaml_content: 'kind: Job', targeting: { agent_ids: [...new Set(targets)] } })
        .then((r) => {
          if (r.status !== 201) failures++;
        }),
    );
  }
  await Promise.all(inFlight);
  return { failures, achieved: count / ((Date.now() - start) / 1000) };
}

const fmt = (values: number[], p: number) => percentile(values, p).toFixed(1);

async function main(): Promise<void> {
  process.stdout.write(
    `work orders: ${AGENTS} agents, ${RATE}/s for ${SECONDS} s, ${TARGETS} target(s) per order\nmachine: ${machine()}\n`,
  );
  const server = await startPostgresServer();
  const stack = await freshStack(server);
  try {
    const { pak, hash } = adminPak();
    const admin = new TestClient(await spawnApi(stack, hash), pak);
    const agents = await createAgents(admin);
    const stats: Stats = { claimMs: [], createToClaimedMs: [], completed: 0, lastCompletedAt: 0, lostRaces: 0, errors: 0 };
    let stopping = false;
    const running = Promise.all(agents.map((a) => runAgent(a, stats, () => stopping)));

    // Warm-up (JIT, pools), not measured.
    const warm = Math.min(RATE, 200);
    await createOrders(admin, agents, warm);
    await waitFor(() => stats.completed >= warm, 60_000, 'the warm-up orders');
    stats.claimMs.length = 0;
    stats.createToClaimedMs.length = 0;
    stats.completed = 0;

    const total = RATE * SECONDS;
    const started = Date.now();
    const { failures, achieved } = await createOrders(admin, agents, total);
    await waitFor(() => stats.completed >= total - failures, 120_000, 'every order to be completed');
    const seconds = (stats.lastCompletedAt - started) / 1000;
    stopping = true;
    await running;

    const claim = [...stats.claimMs].sort((a, b) => a - b);
    const toClaimed = [...stats.createToClaimedMs].sort((a, b) => a - b);
    const logged = (await stack.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM work_order_log')).rows[0]!.n;
    const p99 = percentile(toClaimed, 99);
    const rate = stats.completed / seconds;
    process.stdout.write(
      [
        `orders: ${total} created (${achieved.toFixed(0)}/s offered, ${failures} failed), ${stats.completed} completed, ${logged} in the log (incl. warm-up)`,
        `end to end: ${rate.toFixed(0)} orders/s (first create → last COMPLETED, ${seconds.toFixed(2)} s)`,
        `claim request: p50 ${fmt(claim, 50)} ms, p99 ${fmt(claim, 99)} ms`,
        `create → claimed: p50 ${fmt(toClaimed, 50)} ms, p99 ${p99.toFixed(1)} ms`,
        `lost claim races: ${stats.lostRaces}, errors: ${stats.errors}`,
        `targets: create → claimed p99 < 250 ms ${p99 < 250 ? 'met' : 'MISSED'}; ≥ 500 orders/s ${rate >= 500 ? 'met' : 'MISSED'}`,
      ].join('\n') + '\n',
    );
  } finally {
    await stack.close();
    await server.stop();
  }
}

await main();
