import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How a renderer process is started: a Node process under the permission model, so that a
 * hole in the template engine or in ajv (which compiles a tenant's JSON Schema to JavaScript)
 * still cannot touch the host. The process may read only code (this package and the
 * node_modules trees its engine loads from); it may not write files, start processes or
 * threads, load addons, use WASI or the inspector. It starts with no environment variables
 * and a capped heap. Node 24's permission model has no network switch, so the process also
 * locks itself down (lockdown.ts) before it takes a job. docs/adr/0032 says why.
 */

const here = dirname(fileURLToPath(import.meta.url));
// This package (@brokkr/templates): src/ under tsx (tests, npm start) or dist/ once built, one level up.
const enginePackage = join(here, '..');

/** Every node_modules directory from this package up to the filesystem root (npm hoists). */
function nodeModulesTrees(from: string): string[] {
  const trees: string[] = [];
  for (let dir = from; ; dir = dirname(dir)) {
    trees.push(join(dir, 'node_modules'));
    if (dirname(dir) === dir) return trees;
  }
}

/** The node arguments that start `entry` (a .ts file under tests, .js once built) sandboxed. */
function sandboxedNodeArgs(entry: URL, heapMb: number): string[] {
  const file = fileURLToPath(entry);
  const typescript = file.endsWith('.ts') ? ['--experimental-transform-types', '--disable-warning=ExperimentalWarning'] : [];
  const readable = [enginePackage + sep, ...nodeModulesTrees(enginePackage).map((dir) => dir + sep)];
  return [
    '--permission',
    ...readable.map((dir) => `--allow-fs-read=${dir}`),
    `--max-old-space-size=${heapMb}`,
    '--max-semi-space-size=2',
    ...typescript,
    file,
  ];
}

/**
 * Starts `entry` sandboxed, with an IPC channel. env: {} — no credentials within reach; stdout is
 * ignored and stderr left to the caller (it says why a process died).
 */
export function spawnSandboxed(entry: URL, heapMb: number): ChildProcess {
  return spawn(process.execPath, sandboxedNodeArgs(entry, heapMb), { env: {}, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
}
