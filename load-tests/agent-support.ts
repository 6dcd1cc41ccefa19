/**
 * Infrastructure for the agent benchmark: Postgres (the test kit's global fixture, outside mocha),
 * NATS, the real api, a real kube-apiserver + etcd, and the agent's real main.
 */
import { randomBytes } from 'node:crypto';
import { generatePak } from '@brokkr/pak';
import os from 'node:os';
import { Agent, request } from 'undici';
import { mochaGlobalSetup, mochaGlobalTeardown } from '@brokkr/testkit/global-fixture';
import {
  createTestDatabase,
  freePort,
  spawnService,
  startKubeApiServer,
  startTestNats,
  TestClient,
  type KubeApiServer,
  type RunningService,
} from '@brokkr/testkit';

export interface BenchEnv {
  /** The broker's v1 API as the admin PAK. */
  admin: TestClient;
  kube: KubeApiServer;
  agent: { id: string; name: string; pak: string };
  stop(): Promise<void>;
}

/** `kube`: a cluster the caller started (one where pods run, say), stopped with the rest; else a bare kube-apiserver. */
export async function startBenchEnv(options: { kube?: KubeApiServer } = {}): Promise<BenchEnv> {
  await mochaGlobalSetup();
  const database = await createTestDatabase();
  const nats = await startTestNats();
  const kube = options.kube ?? (await startKubeApiServer());
  const { pak, hash } = generatePak();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = await spawnService({
    service: 'api',
    env: {
      BROKKR__DATABASE__URL: database.url,
      BROKKR__NATS__URL: nats.url,
      BROKKR__BROKER__PAK_HASH: hash,
      BROKKR__BROKER__HOST: '127.0.0.1',
      BROKKR__BROKER__PORT: String(port),
      BROKKR__LOG__LEVEL: 'warn',
    },
    readyUrl: `${url}/readyz`,
  });
  const admin = new TestClient(url, pak);
  const generators = await admin.must<{ id: string; name: string }[]>('GET', '/generators');
  const generatorId = generators.find((g) => g.name === 'admin-generator')!.id;
  const name = `bench-${randomBytes(3).toString('hex')}`;
  const created = await admin.must<{ agent: { id: string }; initial_pak: string }>('POST', '/agents', {
    name,
    cluster_name: 'bench',
    generator_ids: [generatorId],
  });
  await admin.must('PUT', `/agents/${created.agent.id}`, { status: 'ACTIVE' });
  return {
    admin,
    kube,
    agent: { id: created.agent.id, name, pak: created.initial_pak },
    async stop() {
      await api.stop();
      await Promise.allSettled([kube.stop(), nats.stop()]);
      await database.drop();
      await mochaGlobalTeardown();
    },
  };
}

/** The agent's real main; debug logs carry each pass's duration. */
export async function spawnBenchAgent(env: BenchEnv, settings: Record<string, string>): Promise<RunningService> {
  const port = await freePort();
  return spawnService({
    service: 'agent',
    env: {
      BROKKR__AGENT__BROKER_URL: env.admin.baseUrl,
      BROKKR__AGENT__PAK: env.agent.pak,
      BROKKR__AGENT__AGENT_NAME: env.agent.name,
      BROKKR__AGENT__CLUSTER_NAME: 'bench',
      BROKKR__AGENT__KUBECONFIG: env.kube.kubeconfigPath,
      BROKKR__AGENT__HEALTH_PORT: String(port),
      BROKKR__AGENT__POLLING_INTERVAL: '1',
      BROKKR__AGENT__DEPLOYMENT_HEALTH_ENABLED: 'false',
      BROKKR__LOG__LEVEL: 'debug',
      ...settings,
    },
    readyUrl: `http://127.0.0.1:${port}/healthz`,
  });
}

export interface PassRecord {
  at: number;
  seconds: number;
  due: number;
  result: string;
}

/** The "reconcile pass" debug lines the agent wrote so far. */
export function passes(agent: RunningService): PassRecord[] {
  return agent
    .output()
    .split('\n')
    .filter((line) => line.includes('"reconcile pass"'))
    .map((line) => JSON.parse(line) as { time: string; seconds: number; due: number; result: string })
    .map((p) => ({ at: Date.parse(p.time), seconds: p.seconds, due: p.due, result: p.result }));
}

/**
 * A Kubernetes watch on one ConfigMap: calls `onData` with its data at every change, from the
 * moment the stream is open. Measuring through a watch adds no polling delay to the latency.
 */
export async function watchConfigMap(kube: KubeApiServer, ns: string, name: string, onData: (data: Record<string, string>) => void) {
  const dispatcher = new Agent({ connect: { ca: kube.caPem } });
  const controller = new AbortController();
  const res = await request(`${kube.server}/api/v1/namespaces/${ns}/configmaps?watch=1&fieldSelector=metadata.name%3D${name}`, {
    dispatcher,
    signal: controller.signal,
    headers: { authorization: `Bearer ${kube.token}` },
    bodyTimeout: 0,
  });
  let buffer = '';
  res.body.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) onData((JSON.parse(line) as { object: { data?: Record<string, string> } }).object.data ?? {});
    }
  });
  res.body.on('error', () => undefined);
  return async () => {
    controller.abort();
    await dispatcher.destroy();
  };
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()} ${os.arch()}, Node ${process.version}`;
}
