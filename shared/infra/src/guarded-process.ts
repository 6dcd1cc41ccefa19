import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { scriptsDir } from './paths.ts';

export interface GuardedProcess {
  child: ChildProcess;
  /** Resolves when the server (and its guard) have exited, for whatever reason. */
  exited: Promise<void>;
  /** Stops the server (SIGINT, then SIGKILL) and removes its directory; resolves when both are done. */
  stop(): Promise<void>;
}

export interface GuardOptions {
  command: string;
  args: string[];
  /** Temporary directory removed once the server has exited. */
  dir?: string;
  /** Run the server itself as this uid/gid (e.g. 65534 = nobody when we are root: Postgres refuses root). */
  runAs?: number;
  /** Where the server's output goes; defaults to discarding it. */
  onOutput?: (line: string) => void;
  /** More environment for the server (e.g. the passwords its configuration refers to). */
  env?: Record<string, string>;
  /** The signal that asks the server to stop (default SIGINT; SIGKILL follows 10 s later). */
  stopSignal?: 'SIGINT' | 'SIGTERM';
}

/** The guard's environment, which the server inherits: ours, the server's own, and the stop signal. */
function guardEnv(options: GuardOptions): NodeJS.ProcessEnv {
  const signal = options.stopSignal ? { BROKKR_GUARD_STOP_SIGNAL: options.stopSignal.replace(/^SIG/, '') } : {};
  return { ...process.env, ...options.env, ...signal };
}

/**
 * Starts a throwaway server under scripts/lib/guard.sh, which stops it and deletes its directory
 * if this process dies in any way, including SIGKILL. The guard runs in its own process group so a
 * Ctrl-C in the terminal reaches only us, and we stop things in order.
 */
export function startGuarded(options: GuardOptions): GuardedProcess {
  // setpriv execs in place (no intermediate process), so signals reach the server itself.
  const server = options.runAs
    ? ['setpriv', `--reuid=${options.runAs}`, `--regid=${options.runAs}`, '--clear-groups', '--', options.command]
    : [options.command];
  const child = spawn(
    'bash',
    [path.join(scriptsDir, 'lib', 'guard.sh'), String(process.pid), options.dir ?? '-', ...server, ...options.args],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: guardEnv(options) },
  );
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) options.onOutput?.(line);
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  // The guard outlives nothing: it must not keep our event loop alive either.
  child.unref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    child,
    exited,
    stop() {
      stopping ??= (async () => {
        // Waiting for the exit must keep the process alive (the child is unref'd while it runs).
        child.ref();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      })();
      return stopping;
    },
  };
}
