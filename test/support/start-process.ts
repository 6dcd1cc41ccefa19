import { execSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** `npm start` (scripts/start.ts) as a user runs it, with a temp root of its own to check for leftovers. */
export interface StartProcess {
  child: ChildProcessWithoutNullStreams;
  tmp: string;
  output(): string;
  /** Resolves once the output matches, with the match; fails with the output's tail otherwise. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** Ctrl-C; resolves with the exit code and the temporary directories left behind. */
  interrupt(): Promise<{ code: number | null; leaked: string[]; processes: string }>;
}

export function runStart(args: string[], env: Record<string, string>): StartProcess {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'start-test-'));
  fs.chmodSync(tmp, 0o755); // PostgreSQL runs as nobody when we are root and must reach its directory.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, ...env };
  delete childEnv.BROKKR__DATABASE__URL;
  delete childEnv.BROKKR__NATS__URL;
  delete childEnv.BROKKR__BROKER__PAK_HASH;
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', 'scripts/start.ts', ...args], {
    env: childEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    tmp,
    output: () => out,
    async waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(out);
        if (match) return match;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start never printed ${pattern}:\n${out.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async interrupt() {
      child.kill('SIGINT');
      const code = await exited;
      const processes = execSync('ps -eo args').toString();
      // (tsx keeps its compile cache there too; only our own directories count.)
      const leaked = fs.readdirSync(tmp).filter((n) => n.startsWith('brokkr-'));
      fs.rmSync(tmp, { recursive: true, force: true });
      return { code, leaked, processes };
    },
  };
}
