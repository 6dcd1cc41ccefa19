import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';
import { credentialsForSpawn } from './nats.ts';
import { serviceMainArgs } from './service-entry.ts';
import { timedStop, usingInfrastructure } from './tier.ts';

export interface RunningService {
  child: ChildProcess;
  /** Resolves with the exit code (null if killed by a signal) whenever the process ends. */
  exited: Promise<number | null>;
  /** Everything the service wrote, for assertions and for debugging a failed test. */
  output: () => string;
  /** SIGTERM and wait; resolves with the exit code (null if killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL: the crash case. */
  kill(): Promise<void>;
}

export interface SpawnServiceOptions {
  /** Folder name under services/ (runs its main: service-entry.ts says which, its build or its source)... */
  service?: string;
  /** ...or any entry script, e.g. a test fixture. */
  entry?: string;
  /**
   * Its environment. When BROKKR__NATS__URL is a test server (useTestInfra, startTestNats) and no
   * BROKKR__NATS__ credentials are given, a hub service gets its own NATS user, anything else the
   * test-only one: services meet the permissions they have in production.
   */
  env: Record<string, string>;
  /** Polled until it answers 200 (e.g. http://127.0.0.1:<port>/readyz). */
  readyUrl?: string;
  readyTimeoutMs?: number;
}

/**
 * Runs a service's real main (its build when current, else its source through tsx) as a child
 * process, the way an operator would run it, so black-box tests see its HTTP surface, its logs and
 * its exit code.
 */
export async function spawnService(options: SpawnServiceOptions): Promise<RunningService> {
  const what = options.service ? `service ${options.service}` : `process ${path.basename(options.entry ?? '')}`;
  const service = await usingInfrastructure(what, () => spawnMain(options));
  service.stop = timedStop(what, service.stop);
  return service;
}

async function spawnMain(options: SpawnServiceOptions): Promise<RunningService> {
  const args = options.entry
    ? ['--import', 'tsx', '--conditions=development', options.entry]
    : await serviceMainArgs(options.service ?? '');
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: {
      ...process.env,
      BROKKR__LOG__FORMAT: 'json',
      BROKKR__LOG__LEVEL: 'info',
      ...credentialsForSpawn(options.env, options.service),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const handle: RunningService = {
    child,
    exited,
    output: () => log,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  if (options.readyUrl) await waitUntilReady(handle, options.readyUrl, options.readyTimeoutMs ?? 30_000, exited);
  return handle;
}

async function waitUntilReady(service: RunningService, url: string, timeoutMs: number, exited: Promise<number | null>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void exited.then(() => (done = true));
  while (!done) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await service.kill();
  throw new Error(`service did not become ready at ${url}:\n${service.output().slice(-4000)}`);
}
