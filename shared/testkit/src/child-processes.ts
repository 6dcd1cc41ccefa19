/**
 * Every child process a test starts goes through `needsInfrastructure` (tier.ts): the fast tier
 * refuses it, the full tier records it against the running file. node:child_process is wrapped in
 * place and syncBuiltinESMExports() carries the wrappers to `import { spawn } from
 * 'node:child_process'` in every module, loaded before or after.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { needsInfrastructure } from './tier.ts';

const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as Record<string, unknown>;

const FUNCTIONS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

type AnyFunction = (...args: unknown[]) => unknown;

/** What the process runs: the program's name (the first word of an exec command line). */
function describe(args: unknown[]): string {
  const first = typeof args[0] === 'string' ? args[0] : String(args[0]);
  return `child process ${path.basename(first.trim().split(/\s+/)[0] ?? first)}`;
}

function wrap(original: AnyFunction): AnyFunction {
  const wrapped = function (this: unknown, ...args: unknown[]) {
    needsInfrastructure(describe(args));
    return original.apply(this, args);
  };
  // promisify(execFile) uses the original's own promise form, which would bypass the wrapper.
  const custom = (original as unknown as Record<symbol, AnyFunction | undefined>)[promisify.custom];
  if (custom) {
    Object.defineProperty(wrapped, promisify.custom, {
      value(...args: unknown[]) {
        needsInfrastructure(describe(args));
        return custom(...args);
      },
    });
  }
  return wrapped;
}

let guarded = false;

/** Wraps node:child_process once per process. */
export function guardChildProcesses(): void {
  if (guarded) return;
  guarded = true;
  for (const name of FUNCTIONS) childProcess[name] = wrap(childProcess[name] as AnyFunction);
  syncBuiltinESMExports();
}
