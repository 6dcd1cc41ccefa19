/**
 * Agent benchmark (`npm run bench:agent`): the real api (Postgres + NATS), a real kube-apiserver
 * + etcd and the agent's real main, all on this machine.
 *  1. Cold apply of a 100-object stack (1 Namespace, 50 ConfigMaps, 25 Secrets, 24 Services):
 *     from the POST of the deployment object to its SUCCESS event, and the agent's pass duration.
 *  2. No-op pass: resync passes re-applying the same 100 objects (nothing changes).
 *  3. Propagation latency with long-poll: 50 changes of a one-ConfigMap stack, each timed from
 *     just before the POST to the change arriving on a Kubernetes watch.
 *  BENCH_CHANGES (50), BENCH_POLLING=1 adds the same latency run with plain 1 s polling.
 */
import type { RunningService } from '@brokkr/testkit';
import { machine, passes, percentile, spawnBenchAgent, startBenchEnv, waitFor, watchConfigMap, type BenchEnv } from './agent-support.ts';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 50);

const doc = (kind: string, name: string, body: string) =>
  `apiVersion: v1\nkind: ${kind}\nmetadata:\n  name: ${name}\n  namespace: bench-big\n${body}`;

function bigStack(): string {
  const docs = ['apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench-big\n'];
  for (let i = 0; i < 50; i++) docs.push(doc('ConfigMap', `cm-${i}`, `data:\n  index: "${i}"\n  payload: "${'x'.repeat(200)}"\n`));
  for (let i = 0; i < 25; i++) docs.push(doc('Secret', `secret-${i}`, `stringData:\n  token: "t-${i}"\n`));
  for (let i = 0; i < 24; i++)
    docs.push(doc('Service', `svc-${i}`, `spec:\n  selector: {app: a${i}}\n  ports: [{port: 80, targetPort: 8080}]\n`));
  return docs.join('---\n');
}

async function newStack(env: BenchEnv, name: string): Promise<string> {
  const generators = await env.admin.must<{ id: string; name: string }[]>('GET', '/generators');
  const stack = await env.admin.must<{ id: string }>('POST', '/stacks', {
    name,
    generator_id: generators.find((g) => g.name === 'admin-generator')!.id,
  });
  await env.admin.must('POST', `/agents/${env.agent.id}/targets`, { agent_id: env.agent.id, stack_id: stack.id });
  return stack.id;
}

async function deploy(env: BenchEnv, stack: string, yaml: string): Promise<string> {
  return (await env.admin.must<{ id: string }>('POST', `/stacks/${stack}/deployment-objects`, { yaml_content: yaml })).id;
}

async function succeeded(env: BenchEnv, objectId: string): Promise<boolean> {
  const events = await env.admin.must<{ deployment_object_id: string; status: string }[]>('GET', `/agents/${env.agent.id}/events`);
  return events.some((e) => e.deployment_object_id === objectId && e.status === 'SUCCESS');
}

async function coldAndNoop(env: BenchEnv): Promise<string[]> {
  const agent = await spawnBenchAgent(env, { BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '3', BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '30' });
  try {
    const stack = await newStack(env, 'bench-big');
    const started = Date.now();
    const id = await deploy(env, stack, bigStack());
    await waitFor(() => succeeded(env, id), 120_000, 'cold apply');
    const endToEnd = Date.now() - started;
    const cold = passes(agent).find((p) => p.due === 1 && p.result === 'success');
    const after = Date.now();
    const resyncs = () => passes(agent).filter((p) => p.at > after && p.due === 1 && p.result === 'success');
    await waitFor(() => resyncs().length >= 5, 60_000, 'five resync passes');
    const noop = resyncs()
      .slice(0, 5)
      .map((p) => p.seconds * 1000)
      .sort((a, b) => a - b);
    return [
      `cold apply, 100 objects: ${endToEnd} ms from POST to SUCCESS event (agent pass ${cold ? Math.round(cold.seconds * 1000) : '?'} ms: inventory, dry run, apply, prune)`,
      `no-op pass (resync of the same 100 objects, nothing changes): median ${noop[2]} ms, max ${noop[4]} ms over 5 passes`,
    ];
  } finally {
    await agent.stop();
  }
}

async function latency(env: BenchEnv, label: string, settings: Record<string, string>, count: number): Promise<string> {
  const slug = label.replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '');
  const agent: RunningService = await spawnBenchAgent(env, { BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '3600', ...settings });
  try {
    const name = `lat-${slug}`;
    const stack = await newStack(env, `bench-${name}`);
    const cm = (v: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  v: "${v}"\n`;
    const first = await deploy(env, stack, cm(0));
    await waitFor(() => succeeded(env, first), 60_000, 'first version');
    let seen = '0';
    const stop = await watchConfigMap(env.kube, 'default', name, (data) => (seen = data.v ?? seen));
    const samples: number[] = [];
    try {
      for (let i = 1; i <= count; i++) {
        const started = performance.now();
        await deploy(env, stack, cm(i));
        await waitFor(() => seen === String(i), 60_000, `change ${i}`);
        samples.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await stop();
    }
    samples.sort((a, b) => a - b);
    const f = (n: number) => `${Math.round(n)} ms`;
    return `propagation (${label}), ${count} changes: p50 ${f(percentile(samples, 50))}, p99 ${f(percentile(samples, 99))}, max ${f(samples[samples.length - 1]!)}`;
  } finally {
    await agent.stop();
  }
}

async function main(): Promise<void> {
  const env = await startBenchEnv();
  const lines: string[] = [];
  try {
    lines.push(...(await coldAndNoop(env)));
    lines.push(await latency(env, 'long-poll', { BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '30' }, CHANGES));
    if (process.env.BENCH_POLLING === '1') {
      lines.push(await latency(env, 'polling every 1 s', { BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '0' }, Math.min(CHANGES, 20)));
    }
  } finally {
    await env.stop();
  }
  process.stdout.write(`\nagent benchmark — ${machine()}\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

await main();
