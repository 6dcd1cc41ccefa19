import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { repoRoot, scriptsDir } from '@brokkr/infra';

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m', '\x1b[32m', '\x1b[34m'];
let next = 0;

export interface Child {
  name: string;
  stop(): Promise<void>;
}

export interface ChildOptions {
  service: string;
  env: Record<string, string>;
  onExit: (code: number | null) => void;
}

/**
 * Runs one service from source with a coloured name prefix on every log line. It runs under the
 * guard script in its own process group: Ctrl-C reaches only the start script, which stops the
 * services first and the databases last; if the start script is killed outright, the guard still
 * stops the service.
 */
export function startChild(options: ChildOptions): Child {
  const color = COLORS[next++ % COLORS.length] ?? '';
  const prefix = `${color}${options.service.padEnd(18)}\x1b[0m|`;
  const main = path.join(repoRoot, 'services', options.service, 'src', 'main.ts');
  const child = spawn(
    'bash',
    [
      path.join(scriptsDir, 'lib', 'guard.sh'),
      String(process.pid),
      '-',
      process.execPath,
      '--import',
      'tsx',
      '--conditions=development',
      main,
    ],
    { cwd: repoRoot, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix} ${line}\n`));
  }
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      options.onExit(code);
      resolve();
    }),
  );
  return {
    name: options.service,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
