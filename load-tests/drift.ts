/**
 * Drift benchmark (`npm run bench:drift`), three parts (BENCH_PARTS=hub,agent,latency, all by
 * default), each printing its figures:
 *  - hub: 500 agents × 200 drifted objects = 100,000 open records; grouped queries p50/p95/max
 *    (target p95 < 500 ms) and a walk through every page (each record exactly once) — drift-hub.ts;
 *  - agent: what watching costs per 1,000 managed objects (RSS, idle CPU, CPU per drifted
 *    object), drift detection on and off — drift-agent.ts;
 *  - latency: change → record (report mode) and change → corrected (correct mode) over 20 trials
 *    on a cluster where pods run (target p95 < 10 s) — drift-agent.ts.
 */
import { agentCostBenchmark, latencyBenchmark } from './drift-agent.ts';
import { hubBenchmark } from './drift-hub.ts';
import { machine, startPostgresServer } from './webhooks-support.ts';

const parts = (process.env.BENCH_PARTS ?? 'hub,agent,latency').split(',').map((p) => p.trim());

process.stdout.write(`drift benchmark on ${machine()}\n`);
if (parts.includes('hub')) {
  const server = await startPostgresServer();
  try {
    for (const line of await hubBenchmark(server)) process.stdout.write(`${line}\n`);
  } finally {
    await server.stop();
  }
}
if (parts.includes('agent')) for (const line of await agentCostBenchmark()) process.stdout.write(`${line}\n`);
if (parts.includes('latency')) for (const line of await latencyBenchmark()) process.stdout.write(`${line}\n`);
process.stdout.write(`done on ${machine()}\n`);
