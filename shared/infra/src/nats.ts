import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './ports.ts';
import { startGuarded } from './guarded-process.ts';
import { cacheDir, scriptsDir } from './paths.ts';

const exec = promisify(execFile);

export interface NatsHandle {
  url: string;
  port: number;
  external: boolean;
  /** The JetStream store directory. */
  dir?: string;
  stop(): Promise<void>;
}

export interface StartNatsOptions {
  url?: string | undefined;
  /** Reuse a port (e.g. to restart a server in a test); a free one otherwise. */
  port?: number;
  /** Reuse a JetStream store directory (kept on stop when given). */
  storeDir?: string;
  log?: (line: string) => void;
  /** Require this user and password from every client. */
  auth?: { user: string; password: string };
  /**
   * nats-server configuration (e.g. @brokkr/bus's natsAuthorizationConfig: the hub's users and
   * their permissions); the listen address, port, JetStream and its store stay on the command line.
   */
  config?: string;
  /** Environment of nats-server: the variables `config` refers to (`$BROKKR_NATS_PASSWORD_API`). */
  env?: Record<string, string>;
  /** Serve TLS only; with `clientCaFile` every client must present a certificate that CA signed. */
  tls?: { certFile: string; keyFile: string; clientCaFile?: string };
}

function securityArgs(options: StartNatsOptions): string[] {
  const args: string[] = [];
  if (options.auth) args.push('--user', options.auth.user, '--pass', options.auth.password);
  if (options.tls) {
    args.push('--tlscert', options.tls.certFile, '--tlskey', options.tls.keyFile);
    args.push(...(options.tls.clientCaFile ? ['--tlsverify', '--tlscacert', options.tls.clientCaFile] : ['--tls']));
  }
  return args;
}

/** Writes the configuration into the store directory (it holds no secret: passwords come from `env`). */
async function configArgs(options: StartNatsOptions, dir: string): Promise<string[]> {
  if (options.config === undefined) return [];
  const file = path.join(dir, 'brokkr-nats.conf');
  await fs.writeFile(file, options.config, { mode: 0o600 });
  return ['-c', file];
}

/** Uses the given server, or starts nats-server with JetStream on a free port and a temporary store. */
export async function startNats(options: StartNatsOptions = {}): Promise<NatsHandle> {
  if (options.url) return { url: options.url, port: 0, external: true, stop: async () => undefined };
  const bin = await findNatsServer();
  const port = options.port ?? (await freePort());
  const dir = options.storeDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-nats-')));
  const server = startGuarded({
    command: bin,
    // The configuration file first: the flags after it win over anything it sets.
    args: [...(await configArgs(options, dir)), '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, ...securityArgs(options)],
    ...(options.storeDir ? {} : { dir }),
    ...(options.log ? { onOutput: options.log } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  try {
    await Promise.race([
      waitForPort(port),
      server.exited.then(() => {
        throw new Error('nats-server exited during start-up');
      }),
    ]);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const scheme = options.tls ? 'tls' : 'nats';
  return { url: `${scheme}://127.0.0.1:${port}`, port, external: false, dir, stop: () => server.stop() };
}

/** The nats-server release everything runs, pinned once in scripts/lib/nats-server.version (e.g. "2.15.2"). */
export function pinnedNatsVersion(): string {
  return readFileSync(path.join(scriptsDir, 'lib', 'nats-server.version'), 'utf8').trim();
}

/**
 * The pinned nats-server: ~/.cache/brokkr/bin/nats-server once it links to nats-server-v<pinned>,
 * else built first by scripts/lib/install-nats.sh (1-2 minutes, progress on stderr). Never a
 * nats-server found on PATH or an older one in the cache: tests run the release users deploy.
 */
export async function findNatsServer(): Promise<string> {
  const link = path.join(cacheDir, 'bin', 'nats-server');
  if (isPinned(link)) return link;
  const child = exec('bash', [path.join(scriptsDir, 'lib', 'install-nats.sh')], { maxBuffer: 1024 * 1024 });
  // The build takes a while: its progress goes where ours goes.
  child.child.stderr?.pipe(process.stderr);
  await child;
  if (!isPinned(link)) throw new Error(`nats-server v${pinnedNatsVersion()} not found at ${link} after installation`);
  return link;
}

function isPinned(link: string): boolean {
  const versioned = `nats-server-v${pinnedNatsVersion()}`;
  try {
    return readlinkSync(link) === versioned && existsSync(path.join(path.dirname(link), versioned));
  } catch {
    return false;
  }
}
