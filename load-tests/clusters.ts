/**
 * What clusters where pods run cost (`npm run bench:clusters`): prints figures, asserts nothing.
 * Starts BENCH_ROUNDS (3) bare clusters (kube-apiserver + etcd) and as many full ones (plus
 * kube-controller-manager, kube-scheduler and KWOK with 2 simulated nodes), one at a time, and
 * reports the time until each is ready (full: nodes Ready and untainted) and, for the full one,
 * until a 2-replica Deployment is Available; then the RSS of the full cluster's processes.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { ensureKubeAssets, startKubeApiServer, startKubeCluster, type KubeApiServerHandle } from '@brokkr/infra';
import { Agent, request } from 'undici';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

async function timed<T>(start: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await start();
  return [value, performance.now() - t0];
}

async function call(kube: KubeApiServerHandle, method: 'GET' | 'POST', path: string, body?: object): Promise<unknown> {
  const dispatcher = new Agent({ connect: { ca: kube.caPem } });
  try {
    const res = await request(`${kube.server}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${kube.token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return await res.body.json();
  } finally {
    await dispatcher.close();
  }
}

async function deploymentAvailable(kube: KubeApiServerHandle): Promise<number> {
  const t0 = performance.now();
  await call(kube, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
    metadata: { name: 'bench' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'bench' } },
      template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
    },
  });
  for (;;) {
    const d = (await call(kube, 'GET', '/apis/apps/v1/namespaces/default/deployments/bench')) as { status?: { readyReplicas?: number } };
    if (d.status?.readyReplicas === 2) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** RSS in MiB of this process's descendants named like the cluster's binaries. */
function clusterRss(): Record<string, number> {
  const out = execFileSync('ps', ['-eo', 'rss=,comm='], { encoding: 'utf8' });
  const rss: Record<string, number> = {};
  for (const line of out.trim().split('\n')) {
    const [kb, name] = line.trim().split(/\s+/);
    if (name && /^(etcd|kube-apiserver|kube-controller|kube-scheduler|kwok)/.test(name)) rss[name] = (rss[name] ?? 0) + Number(kb) / 1024;
  }
  return rss;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  await ensureKubeAssets({ onProgress: (line) => console.error(line) });
  const bare: number[] = [];
  const full: number[] = [];
  const available: number[] = [];
  let rss: Record<string, number> = {};
  for (let i = 0; i < ROUNDS; i++) {
    const [b, tb] = await timed(() => startKubeApiServer());
    bare.push(tb);
    await b.stop();
    const [f, tf] = await timed(() => startKubeCluster({ nodes: 2 }));
    full.push(tf);
    available.push(await deploymentAvailable(f));
    rss = clusterRss();
    await f.stop();
  }
  console.log(`machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load ${os.loadavg()[0]!.toFixed(2)}`);
  console.log(`| cluster | ready (median of ${ROUNDS}) | runs |`);
  console.log('|---|---:|---|');
  console.log(`| bare: kube-apiserver + etcd | ${s(median(bare))} | ${bare.map(s).join(', ')} |`);
  console.log(`| full: + controllers, scheduler, KWOK (2 nodes) | ${s(median(full))} | ${full.map(s).join(', ')} |`);
  console.log(`| full: a 2-replica Deployment → Available | ${s(median(available))} | ${available.map(s).join(', ')} |`);
  console.log(
    `RSS of a full cluster (MiB): ${Object.entries(rss)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', ')}`,
  );
}

await main();
