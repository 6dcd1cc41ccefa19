import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
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

/** Uses the given server, or starts nats-server with JetStream on a free port and a temporary store. */
export async function startNats(options: StartNatsOptions = {}): Promise<NatsHandle> {
  if (options.url) return { url: options.url, port: 0, external: true, stop: async () => undefined };
  const bin = await findNatsServer();
  const port = options.port ?? (await freePort());
  const dir = options.storeDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-nats-')));
  const server = startGuarded({
    command: bin,
    args: ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, ...securityArgs(options)],
    ...(options.storeDir ? {} : { dir }),
    ...(options.log ? { onOutput: options.log } : {}),
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

export async function findNatsServer(): Promise<string> {
  const cached = path.join(cacheDir, 'bin', 'nats-server');
  const located = locate(cached);
  if (located) return located;
  await exec('bash', [path.join(scriptsDir, 'lib', 'install-nats.sh')], { maxBuffer: 64 * 1024 * 1024 });
  if (!existsSync(cached)) throw new Error('nats-server not found after installation');
  return cached;
}

function locate(cached: string): string | undefined {
  if (existsSync(cached)) return cached;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(path.join(dir, 'nats-server'))) return path.join(dir, 'nats-server');
  }
  return undefined;
}
