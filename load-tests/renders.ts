/**
 * `npm run bench:renders`: a chart-backed stack on a fleet. The real api (its build), PostgreSQL,
 * NATS and the sandboxed renderer on this machine; a classic chart repository on 127.0.0.1;
 * simulated WebSocket agents in child processes (agents-sim.ts) that hold a change once their
 * target state contains the new object.
 *
 * Scenario 1 (BENCH_RENDER_AGENTS, 10,000): every agent targets one stack whose object is a chart;
 * its values read the agent's annotation `group` (BENCH_RENDER_GROUPS, 10 distinct values), so the
 * object has that many distinct renders. Each change posts the chart with new values: the POST
 * (fetch, every render, the grants check, the renders and the agents' rows stored), then until
 * every agent holds the new object; p50/p99 from the POST's start, BENCH_REPEATS times. Renders
 * counted (brokkr_renders_total) and stored (distinct render keys of the object); a sample of agents
 * checked to hold exactly their own render. Target: p99 < 2 s on one api process.
 *
 * Scenario 2 (BENCH_BIG_AGENTS, 1,000): a chart whose render is BENCH_BIG_MIB (10) MiB, served to
 * every agent: the POST, then until all hold it; the api's RSS.
 *
 * CPU of the api, the renderer service (its brokkr-render processes included), PostgreSQL, NATS and the simulator are printed
 * beside each figure: they share the machine's cores.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { locateRenderer } from '@brokkr/render';
import { TestClient, spawnRenderer, startChartRepository, type ChartRepository, type TestRenderer } from '@brokkr/testkit';
import { apiStartFlags, buildApi, spawnApi, type ApiProcess } from './api-env.ts';
import { epochNow, natsServerPid, postmasterPid, processStats, seedAgents, treeCpuSeconds } from './agents-support.ts';
import { SimFleet, type SimAgentSpec } from './agents-sim.ts';
import { adminPak, freshStack, KEY_HEX, machine, percentile, startPostgresServer, type Stack } from './webhooks-support.ts';

const AGENTS = Number(process.env.BENCH_RENDER_AGENTS ?? 10_000);
const GROUPS = Number(process.env.BENCH_RENDER_GROUPS ?? 10);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BIG_AGENTS = Number(process.env.BENCH_BIG_AGENTS ?? 1000);
const BIG_MIB = Number(process.env.BENCH_BIG_MIB ?? 10);
const HELD_TIMEOUT_MS = 120_000;
const SAMPLE = 200;
const log = (line: string) => process.stdout.write(`${line}\n`);
const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '–');

/** The charts of the run: one whose values pick a group, one whose render is BIG_MIB MiB. */
async function benchCharts(): Promise<string[]> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-bench-charts-'));
  const write = async (name: string, template: string, values: string) => {
    const dir = path.join(root, name);
    await fs.mkdir(path.join(dir, 'templates'), { recursive: true });
    await fs.writeFile(path.join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
    await fs.writeFile(path.join(dir, 'values.yaml'), values);
    await fs.writeFile(path.join(dir, 'templates', 'objects.yaml'), template);
    return dir;
  };
  const grouped = await write(
    'grouped',
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cfg\ndata:\n  group: {{ .Values.group | quote }}\n  revision: {{ .Values.revision | quote }}\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n',
    'group: none\nrevision: "0"\n',
  );
  // BIG_MIB MiB: 1 MiB ConfigMaps (a ConfigMap must stay under etcd's limit; the render has none).
  const big = await write(
    'big',
    '{{- range $i := until (int .Values.count) }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-{{ $i }}\ndata:\n  blob: {{ repeat 1048000 "x" | quote }}\n  revision: {{ $.Values.revision | quote }}\n{{- end }}\n',
    `count: ${BIG_MIB}\nrevision: "0"\n`,
  );
  return [grouped, big];
}

interface Cpu {
  api: number;
  renderer: number;
  pg: number;
  nats: number;
}

function cpuOf(env: Env): Cpu {
  const { api, renderer, pids } = env;
  return {
    api: treeCpuSeconds(api.pid),
    renderer: treeCpuSeconds(renderer.child.pid!),
    pg: treeCpuSeconds(pids.pg),
    nats: treeCpuSeconds(pids.nats),
  };
}
const cpuText = (a: Cpu, b: Cpu) =>
  `api ${(b.api - a.api).toFixed(2)} + renderer ${(b.renderer - a.renderer).toFixed(2)} + PostgreSQL ${(b.pg - a.pg).toFixed(2)} + NATS ${(b.nats - a.nats).toFixed(2)} CPU-s`;

async function counter(metricsUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

interface Env {
  stack: Stack;
  api: ApiProcess;
  renderer: TestRenderer;
  admin: TestClient;
  repo: ChartRepository;
  pids: { pg: number; nats: number };
}

/** Posts the chart with these values; resolves with the object's id and the POST's duration. */
async function postChart(env: Env, stackId: string, chart: string, values: Record<string, unknown>): Promise<string> {
  const source = { helm: { repository: env.repo.url, chart, version: '0.1.0' } };
  return (await env.admin.must<{ id: string }>('POST', `/stacks/${stackId}/deployment-objects`, { source, values })).id;
}

/** One change: POST, then until every agent holds the object. */
async function change(env: Env, fleet: SimFleet, post: () => Promise<string>) {
  await fleet.arm();
  const cpuBefore = cpuOf(env);
  const rendersBefore = await counter(`${env.api.url}/metrics`, 'brokkr_renders_total', 'outcome="ok"');
  const t0 = epochNow();
  const id = await post();
  const postMs = epochNow() - t0;
  const got = await fleet.collect([id], HELD_TIMEOUT_MS);
  const held = got.held.map((t) => t - t0).sort((a, b) => a - b);
  const renders = (await counter(`${env.api.url}/metrics`, 'brokkr_renders_total', 'outcome="ok"')) - rendersBefore;
  const cpu = cpuText(cpuBefore, cpuOf(env));
  log(
    `    POST ${ms(postMs)} ms (${renders} render(s)); every agent holds it: p50 ${ms(percentile(held, 50))} / p99 ${ms(percentile(held, 99))} / max ${ms(held.at(-1) ?? NaN)} ms, ` +
      `${got.missed} missed; ${cpu}; simulator ${got.cpuSeconds.toFixed(2)} CPU-s`,
  );
  return { id, postMs, held, renders, missed: got.missed };
}

/** A sample of agents: each is served exactly the render stored for it. */
async function checkOwnRenders(env: Env, objectId: string, agents: { id: string; pak: string }[]): Promise<string> {
  const { rows } = await env.stack.pool.query<{ agent_id: string; yaml_checksum: string }>(
    'SELECT ar.agent_id, r.yaml_checksum FROM agent_renders ar JOIN renders r ON r.key = ar.render_key WHERE ar.deployment_object_id = $1',
    [objectId],
  );
  const expected = new Map(rows.map((r) => [r.agent_id, r.yaml_checksum]));
  const distinct = new Set(rows.map((r) => r.yaml_checksum)).size;
  let own = 0;
  for (const agent of agents.slice(0, SAMPLE)) {
    const served = await new TestClient(env.api.url, agent.pak).must<{ id: string; yaml_checksum: string }[]>(
      'GET',
      `/agents/${agent.id}/target-state?mode=full`,
    );
    if (served.find((o) => o.id === objectId)?.yaml_checksum === expected.get(agent.id)) own++;
  }
  return `${rows.length} agents' rows, ${distinct} distinct renders; ${own} of ${Math.min(SAMPLE, agents.length)} sampled agents hold exactly their own`;
}

const wsSpecs = (agents: { id: string; pak: string }[], url: string): SimAgentSpec[] =>
  agents.map((a, index) => ({ index, kind: 'ws', url, ...a }));

async function withEnv<T>(fn: (env: Env) => Promise<T>): Promise<T> {
  const server = await startPostgresServer();
  const stack = await freshStack(server);
  const [charts, renderer] = await Promise.all([benchCharts(), locateRenderer()]);
  const repo = await startChartRepository(charts);
  const rendererService = await spawnRenderer({ databaseUrl: stack.dbUrl, binary: renderer, env: { BROKKR__LOG__LEVEL: 'warn' } });
  const { pak, hash } = adminPak();
  const api = await spawnApi(
    {
      BROKKR__DATABASE__URL: stack.dbUrl,
      BROKKR__NATS__URL: stack.natsUrl,
      BROKKR__BROKER__HOST: '127.0.0.1',
      BROKKR__BROKER__PAK_HASH: hash,
      BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: KEY_HEX,
      BROKKR__BROKER__SOURCE_ALLOW_PRIVATE_NETWORKS: 'true',
      BROKKR__BROKER__BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
      BROKKR__LOG__LEVEL: 'warn',
    },
    // BENCH_PROFILE_DIR: the api writes a CPU profile there when it stops (node --cpu-prof).
    [...apiStartFlags(), ...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [])],
  );
  try {
    const pids = { pg: await postmasterPid(stack.pool), nats: natsServerPid(stack.natsUrl) };
    return await fn({ stack, api, renderer: rendererService, admin: new TestClient(api.url, pak), repo, pids });
  } finally {
    await api.stop();
    await rendererService.stop();
    await repo.close();
    await stack.close();
    await server.stop();
  }
}

async function grouped(env: Env): Promise<void> {
  log(`… ${AGENTS} WebSocket agents, one chart-backed stack, ${GROUPS} distinct renders per change`);
  const seeded = await seedAgents(env.stack.pool, AGENTS, 1);
  await env.stack.pool.query(
    `INSERT INTO agent_annotations (agent_id, key, value) SELECT a, 'group', 'g' || ((i - 1) % $2) FROM unnest($1::uuid[]) WITH ORDINALITY AS u(a, i)`,
    [seeded.agents.map((a) => a.id), GROUPS],
  );
  const values = (revision: number) => ({ group: '{{ agent.annotations.group }}', revision: String(revision) });
  await postChart(env, seeded.all, 'grouped', values(0));
  const fleet = new SimFleet(Math.ceil(AGENTS / 9000));
  try {
    await fleet.connect(wsSpecs(seeded.agents, env.api.url), 300_000);
    const held: number[] = [];
    let last = '';
    for (let r = 1; r <= REPEATS; r++) {
      const one = await change(env, fleet, () => postChart(env, seeded.all, 'grouped', values(r)));
      held.push(...one.held);
      last = one.id;
    }
    held.sort((a, b) => a - b);
    log(
      `  ${AGENTS} agents, ${GROUPS} renders per change: every agent holds its own render p50 ${ms(percentile(held, 50))} / p99 ${ms(percentile(held, 99))} ms over ${REPEATS} changes`,
    );
    log(`  ${await checkOwnRenders(env, last, seeded.agents)}`);
    const again = await change(env, fleet, () => postChart(env, seeded.all, 'grouped', values(REPEATS)));
    log(`  the same inputs again: ${again.renders} render(s)`);
  } finally {
    await fleet.stop();
  }
}

async function big(env: Env): Promise<void> {
  log(`… ${BIG_AGENTS} WebSocket agents, a ${BIG_MIB} MiB render`);
  const seeded = await seedAgents(env.stack.pool, BIG_AGENTS, 1);
  const fleet = new SimFleet(1);
  try {
    await postChart(env, seeded.all, 'big', { revision: '0' });
    await fleet.connect(wsSpecs(seeded.agents, env.api.url), 300_000);
    const one = await change(env, fleet, () => postChart(env, seeded.all, 'big', { revision: '1' }));
    const bytes = (await env.stack.pool.query<{ n: string }>('SELECT max(octet_length(yaml_content)) AS n FROM renders')).rows[0]!.n;
    const stats = processStats(env.api.pid);
    log(
      `  ${BIG_AGENTS} agents hold a ${(Number(bytes) / 2 ** 20).toFixed(1)} MiB render: p50 ${ms(percentile(one.held, 50))} / p99 ${ms(percentile(one.held, 99))} ms; api RSS ${stats.rssMiB.toFixed(0)} MiB (peak ${stats.peakMiB.toFixed(0)})`,
    );
  } finally {
    await fleet.stop();
  }
}

log(`bench:renders on ${machine()}`);
log('building the api (tsc -b services/api)');
buildApi();
if (AGENTS > 0) await withEnv(grouped);
if (BIG_AGENTS > 0) await withEnv(big);
