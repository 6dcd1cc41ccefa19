import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@brokkr/infra';
import { generatePak } from '@brokkr/pak';
import { freePort, spawnService, TestClient, type RunningService, type TestInfra } from '@brokkr/testkit';

/** The built CLI: the tests run what `npm run build` produces, as a user would. */
export const CLI = path.join(repoRoot, 'tools', 'cli', 'dist', 'bin.js');

/** `tsc -b tools/cli` (and the shared packages it references), so a standalone test run needs no prior build. */
export async function buildCli(): Promise<void> {
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(process.execPath, [tsc, '-b', path.join(repoRoot, 'tools', 'cli')], { cwd: repoRoot });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The CLI's whole environment besides PATH and HOME (a private empty HOME: no config file leaks in). */
  env?: Record<string, string>;
  cwd?: string;
}

let home: string | undefined;
async function emptyHome(): Promise<string> {
  home ??= await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-cli-home-'));
  return home;
}

/** Runs `node dist/bin.js …args` as a subprocess; never throws on a non-zero exit. */
export async function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const env = { PATH: process.env.PATH ?? '', HOME: await emptyHome(), ...options.env };
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

export interface TestHub {
  url: string;
  adminPak: string;
  admin: TestClient;
  service: RunningService;
  /** BROKKR_URL + BROKKR_PAK for the CLI's environment. */
  env(pak?: string): Record<string, string>;
  stop(): Promise<void>;
}

/** A real api process (PostgreSQL + NATS JetStream of the describe block) with a known admin PAK. */
export async function startHub(
  infra: Pick<TestInfra, 'db' | 'nats'>,
  admin: { pak: string; hash: string } = generatePak(),
  env: Record<string, string> = {},
): Promise<TestHub> {
  const { pak: adminPak, hash } = admin;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = await spawnService({
    service: 'api',
    env: {
      BROKKR__BROKER__HOST: '127.0.0.1',
      BROKKR__BROKER__PORT: String(port),
      BROKKR__DATABASE__URL: infra.db.url,
      BROKKR__NATS__URL: infra.nats.url,
      BROKKR__BROKER__PAK_HASH: hash,
      ...env,
    },
    readyUrl: `${url}/readyz`,
  });
  return {
    url,
    adminPak,
    admin: new TestClient(url, adminPak),
    service,
    env: (pak = adminPak) => ({ BROKKR_URL: url, BROKKR_PAK: pak }),
    stop: async () => void (await service.stop()),
  };
}

/**
 * The real maintenance service on the same PostgreSQL and NATS: it moves rollouts on (every
 * second here) and expires stacks. Without it a rollout never leaves `pending`.
 */
export async function startMaintenance(infra: Pick<TestInfra, 'db' | 'nats'>): Promise<RunningService> {
  const port = await freePort();
  return spawnService({
    service: 'maintenance',
    env: {
      BROKKR__DATABASE__URL: infra.db.url,
      BROKKR__NATS__URL: infra.nats.url,
      BROKKR__HEALTH__PORT: String(port),
      BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: '1',
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  });
}

let counter = 0;
export const uniqueName = (prefix: string): string => `${prefix}-${process.pid}-${++counter}`;

/** A generator and its PAK, created through the API. */
export async function createGenerator(hub: TestHub): Promise<{ id: string; name: string; pak: string }> {
  const res = await hub.admin.post('/generators', { name: uniqueName('gen') });
  if (res.status !== 201) throw new Error(`generator create: ${res.status} ${res.text}`);
  return { id: res.body.generator.id, name: res.body.generator.name, pak: res.body.pak };
}

/** An ACTIVE agent registered with the generator; `client` speaks for it (the fake agent of --wait tests). */
export async function createActiveAgent(hub: TestHub, generatorId: string): Promise<{ id: string; name: string; client: TestClient }> {
  const name = uniqueName('agent');
  const res = await hub.admin.post('/agents', { name, cluster_name: name, generator_ids: [generatorId] });
  if (res.status !== 201) throw new Error(`agent create: ${res.status} ${res.text}`);
  const id = res.body.agent.id as string;
  const activated = await hub.admin.put(`/agents/${id}`, { status: 'ACTIVE' });
  if (activated.status !== 200) throw new Error(`agent activate: ${activated.status} ${activated.text}`);
  return { id, name, client: hub.admin.as(res.body.initial_pak) };
}

/** A directory of manifest files (name → content) under a parent named for the stack. */
export async function manifestDir(stackName: string, files: Record<string, string>): Promise<string> {
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-cli-'));
  const dir = path.join(parent, stackName);
  await fs.mkdir(dir);
  for (const [name, content] of Object.entries(files)) await fs.writeFile(path.join(dir, name), content);
  return dir;
}

export const configMap = (name: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  value: "${value}"\n`;
