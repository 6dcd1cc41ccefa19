/**
 * What one render costs, and what a queue between the api and a `renderer` service would add
 * (docs/adr/0043). Prints, on this machine:
 *
 *   - the floor: spawning brokkr-render for `--version` (no sandbox);
 *   - a small chart (3 templates) and a small overlay, rendered in a fresh process without the
 *     sandbox and with it (unshare + prlimit + setpriv), one after another: wall time and the CPU
 *     time the children used (cutime + cstime of /proc/self/stat);
 *   - throughput with 2 processes at once (the renderer's pool);
 *   - a PostgreSQL job queue's round trip as a renderer service would run it: the api inserts the
 *     job and NOTIFYs, the renderer (another connection) claims it with UPDATE … FOR UPDATE SKIP
 *     LOCKED and a lease, stores the result and NOTIFYs, the api reads it — without the render.
 *
 *   bash scripts/with-node.sh node --import tsx --conditions=development shared/render/bench/render-cost.ts
 *
 * Environment: BENCH_N (40 renders per figure), BENCH_QUEUE_N (300 round trips).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';
import pg from 'pg';
import { startPostgres } from '@brokkr/infra';
import { createRenderer, DEFAULT_LIMITS, locateRenderer, type RenderJob } from '../src/index.ts';
import { runJob } from '../src/run-job.ts';
import { probeSandbox, type Sandbox } from '../src/sandbox.ts';
import { chartArchive, treeArchive } from '../test/fixtures/archive.ts';

const exec = promisify(execFile);
const N = Number(process.env.BENCH_N ?? 40);
const QUEUE_N = Number(process.env.BENCH_QUEUE_N ?? 300);

const CHART: RenderJob = {
  kind: 'helm',
  release: { name: 'shop', namespace: 'team-a' },
  values: { replicas: 2 },
  capabilities: { kubeVersion: 'v1.33.13', apiVersions: ['v1', 'apps/v1'] },
  archive: chartArchive('web', {
    'values.yaml': 'replicas: 1\nimage: nginx:1.27\n',
    'templates/_helpers.tpl': '{{- define "web.name" -}}{{ .Release.Name }}-web{{- end -}}\n',
    'templates/deployment.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include "web.name" . }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n        - name: web\n          image: {{ .Values.image }}\n',
    'templates/service.yaml':
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include "web.name" . }}\nspec:\n  ports:\n    - port: 80\n',
    'templates/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "web.name" . }}\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n',
  }),
};

const OVERLAY: RenderJob = {
  kind: 'kustomize',
  path: 'overlays/prod',
  archive: treeArchive({
    'base/kustomization.yaml': 'resources:\n  - deployment.yaml\n',
    'base/deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n',
    'overlays/prod/kustomization.yaml': 'namePrefix: prod-\nnamespace: shop\nresources:\n  - ../../base\n',
  }),
};

/** CPU time of this process's waited-for children, in ms (clock ticks of 10 ms). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After "pid (comm) ": state is field 3, cutime 16 and cstime 17 (1-based) → indexes 13, 14.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function measure(label: string, once: () => Promise<unknown>): Promise<void> {
  await once();
  const walls: number[] = [];
  const cpu0 = childrenCpuMs();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await once();
    walls.push(performance.now() - t0);
  }
  const cpu = (childrenCpuMs() - cpu0) / N;
  process.stdout.write(
    `  ${label.padEnd(58)} wall median ${ms(median(walls))}, p90 ${ms([...walls].sort((a, b) => a - b)[Math.floor(N * 0.9)]!)}, CPU ${ms(cpu)}\n`,
  );
}

async function mustRender(sandbox: Sandbox, binary: string, job: RenderJob): Promise<void> {
  const result = await runJob({ sandbox, binary, limits: DEFAULT_LIMITS }, job);
  if (!result.ok) throw new Error(`render failed: ${result.error}`);
}

async function renders(binary: string): Promise<void> {
  const sandbox = await probeSandbox();
  const bare: Sandbox = { isolation: sandbox.isolation, command: (file) => ({ file, args: [] }) };
  process.stdout.write(`renders (${N} each, one after another; sandbox: ${JSON.stringify(sandbox.isolation)})\n`);
  await measure('brokkr-render --version (process start, no sandbox)', () => exec(binary, ['--version']));
  await measure('small chart, fresh process, no sandbox', () => mustRender(bare, binary, CHART));
  await measure('small chart, fresh process, sandboxed', () => mustRender(sandbox, binary, CHART));
  await measure('small overlay, fresh process, sandboxed', () => mustRender(sandbox, binary, OVERLAY));
  const renderer = await createRenderer({ binary, concurrency: 2, maxQueued: N, maxQueuedPerTenant: N, log: () => undefined });
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: N }, (_, i) => renderer.render(`tenant-${i % 4}`, CHART)));
  const took = performance.now() - t0;
  await renderer.close();
  if (results.some((r) => !r.ok)) throw new Error('a render failed');
  process.stdout.write(`  ${'small chart, 2 processes at once, 4 tenants'.padEnd(58)} ${(N / (took / 1000)).toFixed(1)} renders/s\n`);
}

const QUEUE_SQL = `
  CREATE TABLE render_jobs (
    id bigserial PRIMARY KEY, tenant text NOT NULL, status text NOT NULL DEFAULT 'pending',
    job bytea NOT NULL, result text, acquired_until timestamptz, created_at timestamptz NOT NULL DEFAULT now());
  CREATE INDEX render_jobs_pending ON render_jobs (id) WHERE status = 'pending';`;

const CLAIM = `
  UPDATE render_jobs SET status = 'running', acquired_until = now() + interval '30 seconds'
   WHERE id IN (SELECT id FROM render_jobs WHERE status = 'pending' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
  RETURNING id, tenant, job`;

/** The renderer side: woken by NOTIFY, claims, "renders" (nothing), stores the result, notifies. */
async function serveQueue(worker: pg.Client, yaml: string): Promise<void> {
  await worker.query('LISTEN render_jobs');
  const serve = async () => {
    const claimed = await worker.query<{ id: string }>(CLAIM);
    for (const row of claimed.rows) {
      await worker.query(`UPDATE render_jobs SET status = 'done', result = $2 WHERE id = $1`, [row.id, yaml]);
      await worker.query(`SELECT pg_notify('render_done', $1)`, [row.id]);
    }
  };
  // A wake-up that arrives as the benchmark ends meets a closed connection: nothing waits for it.
  worker.on('notification', () => void serve().catch(() => undefined));
}

async function queue(): Promise<void> {
  const server = await startPostgres({});
  const api = new pg.Client({ connectionString: server.url });
  const worker = new pg.Client({ connectionString: server.url });
  try {
    await Promise.all([api.connect(), worker.connect()]);
    await api.query(QUEUE_SQL);
    await serveQueue(worker, 'x'.repeat(4_000));
    await api.query('LISTEN render_done');
    const done = new Map<string, () => void>();
    api.on('notification', (n) => done.get(n.payload!)?.());
    const walls: number[] = [];
    for (let i = 0; i < QUEUE_N + 20; i++) {
      const t0 = performance.now();
      const { rows } = await api.query<{ id: string }>(`INSERT INTO render_jobs (tenant, job) VALUES ($1, $2) RETURNING id`, [
        'tenant-a',
        CHART.archive,
      ]);
      const finished = new Promise<void>((resolve) => done.set(rows[0]!.id, resolve));
      await api.query(`SELECT pg_notify('render_jobs', '')`);
      await finished;
      await api.query('SELECT result FROM render_jobs WHERE id = $1', [rows[0]!.id]);
      if (i >= 20) walls.push(performance.now() - t0);
    }
    process.stdout.write(
      `queue round trip through PostgreSQL (${QUEUE_N}, one at a time; insert + notify, claim + lease, result + notify, read)\n`,
    );
    process.stdout.write(
      `  ${'without the render'.padEnd(58)} wall median ${ms(median(walls))}, p90 ${ms([...walls].sort((a, b) => a - b)[Math.floor(walls.length * 0.9)]!)}\n`,
    );
  } finally {
    await Promise.all([api.end(), worker.end()]);
    await server.stop();
  }
}

const cpus = os.cpus();
process.stdout.write(
  `render cost on ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}\n`,
);
const binary = await locateRenderer();
process.stdout.write(`${(await exec(binary, ['--version'])).stdout.trim()}\n`);
await renders(binary);
await queue();
