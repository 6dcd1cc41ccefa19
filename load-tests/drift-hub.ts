/**
 * The hub half of the drift benchmark: BENCH_DRIFT_AGENTS (500) agents, each served
 * BENCH_DRIFT_STACKS (10) stacks, report BENCH_DRIFT_OBJECTS (200) drifted objects each through
 * POST /agents/{id}/drift (one batch per agent, as an agent's first sweep would), which leaves
 * agents × objects open records (100,000). Then, as the admin: every grouping of the open records
 * BENCH_DRIFT_REPEATS (20) times (p50/p95/max; target p95 < 500 ms), and a walk through every page
 * of GET /drift (1,000 per page), which must return each record exactly once.
 */
import { randomUUID } from 'node:crypto';
import { generatePak } from '@brokkr/pak';
import { TestClient } from '@brokkr/testkit';
import { startCpuWindow } from './cpu-window.ts';
import { adminPak, freshStack, percentile, spawnApi, type Stack } from './webhooks-support.ts';
import type { PostgresHandle } from '@brokkr/infra';

const AGENTS = Number(process.env.BENCH_DRIFT_AGENTS ?? 500);
const OBJECTS = Number(process.env.BENCH_DRIFT_OBJECTS ?? 200);
const STACKS = Number(process.env.BENCH_DRIFT_STACKS ?? 10);
const REPEATS = Number(process.env.BENCH_DRIFT_REPEATS ?? 20);
const CONCURRENCY = 8;

/** What drifts, and who did it: a mix with a few dominant fields and managers, as a fleet shows. */
const PATTERNS = [
  { path: '/spec/replicas', manager: 'kubectl', desired: 2, live: 5, weight: 37 },
  { path: '/spec/replicas', manager: 'hpa-controller', desired: 2, live: 8, weight: 20 },
  {
    path: '/spec/template/spec/containers/0/image',
    manager: 'kubectl-set',
    desired: 'shop/web:1.4',
    live: 'shop/web:1.5-hotfix',
    weight: 15,
  },
  { path: '/metadata/labels/owner', manager: 'kubectl-edit', desired: null, live: 'ops', weight: 10 },
  { path: '/data/mode', manager: 'argocd-controller', desired: 'fast', live: 'safe', weight: 10 },
  { path: '/spec/template/spec/containers/0/resources/limits/memory', manager: 'vpa-updater', desired: '256Mi', live: '512Mi', weight: 8 },
];
const WEIGHTS = PATTERNS.flatMap((p, i) => Array.from({ length: p.weight }, () => i));

interface SeededAgent {
  id: string;
  pak: string;
}

/** A generator, its stacks, and AGENTS agents registered with it and targeted at every stack (SQL: seconds, not minutes of HTTP). */
async function seed(stack: Stack, admin: TestClient): Promise<{ agents: SeededAgent[]; stacks: string[] }> {
  const generator = await admin.must<{ generator: { id: string } }>('POST', '/generators', {
    name: `drift-bench-${randomUUID().slice(0, 6)}`,
  });
  const stacks: string[] = [];
  for (let i = 0; i < STACKS; i++) {
    const s = await admin.must<{ id: string }>('POST', '/stacks', { name: `drift-stack-${i}`, generator_id: generator.generator.id });
    stacks.push(s.id);
  }
  const keys = Array.from({ length: AGENTS }, () => generatePak());
  const { rows } = await stack.pool.query<{ id: string }>(
    `INSERT INTO agents (name, cluster_name, status, pak_hash)
     SELECT 'drift-agent-' || lpad(n::text, 4, '0'), 'cluster-' || n, 'ACTIVE', h
       FROM unnest($1::text[]) WITH ORDINALITY AS x(h, n) ORDER BY n RETURNING id`,
    [keys.map((k) => k.hash)],
  );
  await stack.pool.query(`INSERT INTO agent_generator_registrations (agent_id, generator_id) SELECT id, $2 FROM unnest($1::uuid[]) id`, [
    rows.map((r) => r.id),
    generator.generator.id,
  ]);
  await stack.pool.query(
    `INSERT INTO agent_targets (agent_id, stack_id) SELECT a, s FROM unnest($1::uuid[]) a CROSS JOIN unnest($2::uuid[]) s`,
    [rows.map((r) => r.id), stacks],
  );
  return { agents: rows.map((r, i) => ({ id: r.id, pak: keys[i]!.pak })), stacks };
}

function reportsFor(stacks: string[]): unknown[] {
  const observed = new Date().toISOString();
  return Array.from({ length: OBJECTS }, (_, i) => {
    const p = PATTERNS[WEIGHTS[Math.floor(Math.random() * WEIGHTS.length)]!]!;
    return {
      id: randomUUID(),
      stack_id: stacks[i % stacks.length],
      deployment_object_id: null,
      object: { api_version: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: `web-${i}` },
      state: 'open',
      fields: [{ path: p.path, desired: p.desired, live: p.live, manager: p.manager, operation: 'Update', time: observed }],
      observed_at: observed,
    };
  });
}

/** Every agent's batch, CONCURRENCY at a time; the time of each POST. */
async function ingest(url: string, agents: SeededAgent[], stacks: string[]): Promise<{ seconds: number; batches: number[]; cpu: string }> {
  const batches: number[] = [];
  const cpu = startCpuWindow();
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < agents.length) {
      const agent = agents[next++]!;
      const t = performance.now();
      const res = await new TestClient(url, agent.pak).post(`/agents/${agent.id}/drift`, { reports: reportsFor(stacks) });
      if (res.status !== 200) throw new Error(`report batch: ${res.status} ${res.text}`);
      batches.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { seconds: (Date.now() - started) / 1000, batches: batches.sort((a, b) => a - b), cpu: cpu().text };
}

const stats = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(0)} ms, p95 ${percentile(sorted, 95).toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`;
};

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

/** Each grouping REPEATS times (one request at a time). */
async function groupings(admin: TestClient): Promise<string[]> {
  const lines: string[] = [];
  for (const by of ['field', 'manager', 'agent', 'stack', 'kind', 'stack_agent']) {
    const times: number[] = [];
    let summary = '';
    const cpu = startCpuWindow();
    for (let i = 0; i < REPEATS; i++) {
      const { ms, value } = await timed(() =>
        admin.must<{ records: number; agents: number; groups: unknown[] }>('GET', `/drift/groups?by=${by}&state=open&limit=100`),
      );
      times.push(ms);
      summary = `${value.records} records, ${value.agents} agents, ${value.groups.length} groups`;
    }
    const window = cpu();
    const perRequest = ((window.oursSeconds * 1000) / REPEATS).toFixed(0);
    lines.push(`  GET /drift/groups?by=${by}&state=open: ${stats(times)}, ${perRequest} ms CPU each (${summary}; ${window.text})`);
  }
  return lines;
}

/** Every page of the open records, 1,000 at a time: how many, how many distinct, how long. */
async function pageThrough(admin: TestClient): Promise<string> {
  const ids = new Set<string>();
  const pages: number[] = [];
  let total = 0;
  let cursor: string | null = null;
  const cpu = startCpuWindow();
  const started = performance.now();
  do {
    const query: string = `/drift?state=open&limit=1000${cursor ? `&cursor=${cursor}` : ''}`;
    const { ms, value } = await timed(() => admin.must<{ items: { id: string }[]; next_cursor: string | null }>('GET', query));
    pages.push(ms);
    for (const r of value.items) ids.add(r.id);
    total += value.items.length;
    cursor = value.next_cursor;
  } while (cursor);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const window = cpu();
  const verdict = total === AGENTS * OBJECTS && ids.size === total ? 'every record once' : 'MISSING OR REPEATED RECORDS';
  return `  GET /drift?state=open&limit=1000, every page: ${pages.length} pages, ${total} records (${ids.size} distinct: ${verdict}) in ${seconds} s; per page ${stats(pages)}, ${((window.oursSeconds * 1000) / pages.length).toFixed(0)} ms CPU each (${window.text})`;
}

export async function hubBenchmark(server: PostgresHandle): Promise<string[]> {
  const stack = await freshStack(server);
  try {
    const key = adminPak();
    const url = await spawnApi(stack, key.hash);
    const admin = new TestClient(url, key.pak);
    const { agents, stacks } = await seed(stack, admin);
    const ingested = await ingest(url, agents, stacks);
    // A build that is not current runs the api's TypeScript through tsx: slower, and it says so.
    const form = stack.services[0]!.child.spawnargs.some((arg) => arg.endsWith('dist/main.js')) ? 'built' : 'source, tsx';
    const lines = [
      `hub (api ${form}): ${AGENTS} agents × ${OBJECTS} drifted objects (${STACKS} stacks each) reported in ${ingested.seconds.toFixed(1)} s ` +
        `(${Math.round((AGENTS * OBJECTS) / ingested.seconds)} reports/s, ${CONCURRENCY} batches in flight); batch of ${OBJECTS}: ${stats(ingested.batches)} (${ingested.cpu})`,
    ];
    // Autovacuum vacuums and analyzes tables this size (the records, the outbox's events) within a
    // minute of the load; the bench does it at once rather than wait, so that no query is timed
    // against autovacuum's own scans.
    await stack.pool.query('VACUUM (ANALYZE)');
    lines.push(...(await groupings(admin)), await pageThrough(admin));
    return lines;
  } finally {
    await stack.close();
  }
}
