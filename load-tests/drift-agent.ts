/**
 * The agent half of the drift benchmark.
 *
 * Cost per 1,000 managed objects (a bare kube-apiserver: ConfigMaps need no controllers): one
 * stack of BENCH_DRIFT_MANAGED (1,000) ConfigMaps applied by the agent's real main, with drift
 * detection on, then off (the resync re-applies every object instead). For each: the agent's RSS
 * once settled, its CPU over an idle window of BENCH_DRIFT_IDLE_SECONDS (60) with a resync/sweep
 * every BENCH_DRIFT_RESYNC_SECONDS (20), and, with drift on, the CPU per drifted object when
 * another client changes BENCH_DRIFT_CHANGES (100) of them (detected, reported, corrected).
 *
 * Detection time on a cluster where pods run (kube-controller-manager, kube-scheduler, KWOK):
 * BENCH_DRIFT_TRIALS (20) times, another client scales a Deployment the agent applied (its own
 * field manager); report mode: until the hub's open record shows the new value; correct mode:
 * until the hub has the corrected record and the Deployment is back. p50/p95/max (target p95 < 10 s).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { startKubeCluster, type KubeApiServer, type RunningService, type TestClient } from '@brokkr/testkit';
import { spawnBenchAgent, startBenchEnv, waitFor, type BenchEnv } from './agent-support.ts';
import { treeCpuSecondsOf } from './api-env.ts';
import { startCpuWindow } from './cpu-window.ts';
import { percentile } from './webhooks-support.ts';

const MANAGED = Number(process.env.BENCH_DRIFT_MANAGED ?? 1000);
const IDLE_SECONDS = Number(process.env.BENCH_DRIFT_IDLE_SECONDS ?? 60);
const RESYNC_SECONDS = process.env.BENCH_DRIFT_RESYNC_SECONDS ?? '20';
const CHANGES = Number(process.env.BENCH_DRIFT_CHANGES ?? 100);
const TRIALS = Number(process.env.BENCH_DRIFT_TRIALS ?? 20);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw client of the test apiserver with its admin token: the "other client" that drifts objects. */
function kubeClient(kube: KubeApiServer) {
  const dispatcher = new Agent({ connect: { ca: kube.caPem } });
  return {
    async patch(path: string, manager: string, body: unknown): Promise<void> {
      const res = await request(`${kube.server}${path}?fieldManager=${manager}`, {
        method: 'PATCH',
        dispatcher,
        headers: { authorization: `Bearer ${kube.token}`, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify(body),
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`PATCH ${path}: ${res.statusCode} ${text}`);
    },
    async get(path: string): Promise<Record<string, unknown>> {
      const res = await request(`${kube.server}${path}`, { dispatcher, headers: { authorization: `Bearer ${kube.token}` } });
      return (await res.body.json()) as Record<string, unknown>;
    },
    close: () => dispatcher.close(),
  };
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

function configMaps(ns: string): string {
  const docs = [`apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`];
  for (let i = 0; i < MANAGED; i++)
    docs.push(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${ns}\ndata:\n  index: "${i}"\n  mode: fast\n`);
  return docs.join('---\n');
}

async function targetedStack(admin: TestClient, agentId: string, name: string, policy?: unknown): Promise<string> {
  const generators = await admin.must<{ id: string; name: string }[]>('GET', '/generators');
  const stack = await admin.must<{ id: string }>('POST', '/stacks', {
    name,
    generator_id: generators.find((g) => g.name === 'admin-generator')!.id,
  });
  if (policy) await admin.must('PUT', `/stacks/${stack.id}/drift-policy`, policy);
  await admin.must('POST', `/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stack.id });
  return stack.id;
}

async function appliedBy(env: Pick<BenchEnv, 'admin' | 'agent'>, stackId: string, yaml: string): Promise<void> {
  const d = await env.admin.must<{ id: string }>('POST', `/stacks/${stackId}/deployment-objects`, { yaml_content: yaml });
  const done = async () =>
    (await env.admin.must<{ deployment_object_id: string; status: string }[]>('GET', `/agents/${env.agent.id}/events`)).some(
      (e) => e.deployment_object_id === d.id && e.status === 'SUCCESS',
    );
  await waitFor(done, 300_000, 'the stack applied');
}

async function openRecords(admin: TestClient, stackId: string, state: string): Promise<number> {
  const page = await admin.must<{ items: unknown[]; next_cursor: string | null }>(
    'GET',
    `/stacks/${stackId}/drift?state=${state}&limit=1000`,
  );
  return page.items.length;
}

interface CostRun {
  rss: number;
  idleCpuPercent: number;
  idleMachine: string;
  perChangeMs?: number;
  changeMachine?: string;
  /** How the agent ran: its built dist/main.js, or its TypeScript source through tsx (more memory). */
  form: string;
}

const formOf = (agent: RunningService) => (agent.child.spawnargs.some((a) => a.endsWith('dist/main.js')) ? 'built' : 'source, tsx');

/** One agent run against the same stack: settle, idle window, and (drift on) CHANGES drifted objects. */
async function costRun(env: BenchEnv, stackId: string, drift: boolean): Promise<CostRun> {
  const agent: RunningService = await spawnBenchAgent(env, {
    BROKKR__AGENT__DRIFT_ENABLED: String(drift),
    BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: RESYNC_SECONDS,
    BROKKR__LOG__LEVEL: 'warn',
  });
  try {
    const pid = agent.child.pid!;
    await appliedBy(env, stackId, `${configMaps('drift-bench')}---\n# run ${Date.now()}\n`);
    await sleep(10_000);
    const machine = startCpuWindow();
    const cpu0 = treeCpuSecondsOf(pid);
    await sleep(IDLE_SECONDS * 1000);
    const idleCpuPercent = ((treeCpuSecondsOf(pid) - cpu0) / IDLE_SECONDS) * 100;
    const run: CostRun = { rss: rssMiB(pid), idleCpuPercent, idleMachine: machine().text, form: formOf(agent) };
    if (drift) Object.assign(run, await changeCost(env, stackId, pid));
    return run;
  } finally {
    await agent.stop();
  }
}

/** CPU of the agent per object another client changed, from the changes until the hub has every one corrected. */
async function changeCost(env: BenchEnv, stackId: string, pid: number): Promise<{ perChangeMs: number; changeMachine: string }> {
  const kube = kubeClient(env.kube);
  try {
    const before = await openRecords(env.admin, stackId, 'corrected');
    const machine = startCpuWindow();
    const cpu0 = treeCpuSecondsOf(pid);
    for (let i = 0; i < CHANGES; i++)
      await kube.patch(`/api/v1/namespaces/drift-bench/configmaps/cm-${i}`, 'bench-editor', { data: { mode: 'slow' } });
    await waitFor(async () => (await openRecords(env.admin, stackId, 'corrected')) >= before + CHANGES, 300_000, 'every change corrected');
    return { perChangeMs: ((treeCpuSecondsOf(pid) - cpu0) * 1000) / CHANGES, changeMachine: machine().text };
  } finally {
    await kube.close();
  }
}

export async function agentCostBenchmark(): Promise<string[]> {
  const env = await startBenchEnv();
  try {
    const stackId = await targetedStack(env.admin, env.agent.id, 'drift-cost');
    const on = await costRun(env, stackId, true);
    const off = await costRun(env, stackId, false);
    return [
      `agent (${on.form}), ${MANAGED} ConfigMaps managed (bare kube-apiserver; resync/sweep every ${RESYNC_SECONDS} s, idle window ${IDLE_SECONDS} s):`,
      `  drift on:  RSS ${on.rss.toFixed(0)} MiB, idle CPU ${on.idleCpuPercent.toFixed(2)} % of a core (${on.idleMachine})`,
      `             ${on.perChangeMs!.toFixed(1)} ms CPU per drifted object (detected, reported, corrected; ${CHANGES} changes; ${on.changeMachine})`,
      `  drift off: RSS ${off.rss.toFixed(0)} MiB, idle CPU ${off.idleCpuPercent.toFixed(2)} % of a core (every resync re-applies all ${MANAGED} objects; ${off.idleMachine})`,
    ];
  } finally {
    await env.stop();
  }
}

const deploymentYaml = (ns: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: main
          image: shop/web:1.0
`;

const stats = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `p50 ${(percentile(sorted, 50) / 1000).toFixed(2)} s, p95 ${(percentile(sorted, 95) / 1000).toFixed(2)} s, max ${(sorted[sorted.length - 1]! / 1000).toFixed(2)} s`;
};

interface LatencyCtx {
  env: Pick<BenchEnv, 'admin' | 'agent'>;
  kube: ReturnType<typeof kubeClient>;
}

/** Report mode: scale to a new value each trial; until the open record shows it. */
async function detectionTrials(ctx: LatencyCtx, stackId: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const replicas = 3 + (i % 5) + (i % 2 ? 10 : 0);
    const started = performance.now();
    await ctx.kube.patch('/apis/apps/v1/namespaces/drift-report/deployments/web/scale', 'bench-scaler', { spec: { replicas } });
    await waitFor(
      async () => {
        const page = await ctx.env.admin.must<{ items: { fields: { live: unknown }[] }[] }>('GET', `/stacks/${stackId}/drift?state=open`);
        return page.items[0]?.fields[0]?.live === replicas;
      },
      60_000,
      'the open record showing the new value',
    );
    times.push(performance.now() - started);
    await sleep(500);
  }
  return times;
}

/** Correct mode: scale; until the hub has one more corrected record and the Deployment is back at 2. */
async function correctionTrials(ctx: LatencyCtx, stackId: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const before = await openRecords(ctx.env.admin, stackId, 'corrected');
    const started = performance.now();
    await ctx.kube.patch('/apis/apps/v1/namespaces/drift-correct/deployments/web/scale', 'bench-scaler', {
      spec: { replicas: 5 + (i % 3) },
    });
    await waitFor(
      async () =>
        (await openRecords(ctx.env.admin, stackId, 'corrected')) > before &&
        ((await ctx.kube.get('/apis/apps/v1/namespaces/drift-correct/deployments/web')).spec as { replicas: number }).replicas === 2,
      60_000,
      'the correction',
    );
    times.push(performance.now() - started);
    await sleep(500);
  }
  return times;
}

/** The latency trials on a cluster where pods run; the api and the agent as in the cost runs, default drift settings. */
export async function latencyBenchmark(): Promise<string[]> {
  const cluster = await startKubeCluster();
  const env = await startBenchEnv({ kube: cluster });
  const agent = await spawnBenchAgent(env, { BROKKR__LOG__LEVEL: 'warn' });
  const kube = kubeClient(cluster);
  try {
    const report = await targetedStack(env.admin, env.agent.id, 'drift-report', { mode: 'report' });
    await appliedBy(env, report, deploymentYaml('drift-report'));
    const correct = await targetedStack(env.admin, env.agent.id, 'drift-correct');
    await appliedBy(env, correct, deploymentYaml('drift-correct'));
    const ctx = { env, kube };
    const reportWindow = startCpuWindow();
    const detected = await detectionTrials(ctx, report);
    const reportMachine = reportWindow().text;
    const correctWindow = startCpuWindow();
    const corrected = await correctionTrials(ctx, correct);
    const correctMachine = correctWindow().text;
    return [
      `latency on a cluster where pods run (KWOK), ${TRIALS} trials, another client scales a Deployment (default debounce 1 s; agent ${formOf(agent)}):`,
      `  report mode, change → the hub's open record shows it: ${stats(detected)} (${reportMachine})`,
      `  correct mode, change → corrected record on the hub and the Deployment back: ${stats(corrected)} (${correctMachine})`,
    ];
  } finally {
    await kube.close();
    await agent.stop();
    await env.stop();
  }
}
