/**
 * How spawnService runs a service: its compiled main (services/<name>/dist/main.js, as production
 * runs it) when `tsc -b` says that build is current, else its source through tsx. Loading the
 * api's source through tsx takes about 2.5 s more than loading its build (tsx's loader runs every
 * module of the graph through its hooks), and `npm test` spawns close to 200 services after its
 * typecheck step has built every package; a developer who edited a file and did not build gets
 * the source, as before. BROKKR_TEST_SERVICES=source always runs the source.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { repoRoot } from '@brokkr/infra';

const require = createRequire(import.meta.url);
const current = new Map<string, Promise<boolean>>();

/**
 * Whether `tsc -b` would build nothing for the service and the packages it references. ("would
 * update timestamps" is current: the sources' contents are those the build was made from.)
 */
function buildIsCurrent(service: string): Promise<boolean> {
  const tsc = require.resolve('typescript/bin/tsc');
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-b', path.join(repoRoot, 'services', service), '--dry'], (err, stdout) => {
      resolve(!err && !/would build/.test(stdout));
    });
  });
}

/** Node's arguments for the service's main: its build once per run found current, else its source. */
export async function serviceMainArgs(service: string): Promise<string[]> {
  const source = ['--import', 'tsx', '--conditions=development', path.join(repoRoot, 'services', service, 'src', 'main.ts')];
  if (process.env.BROKKR_TEST_SERVICES === 'source') return source;
  if (!current.has(service)) current.set(service, buildIsCurrent(service));
  return (await current.get(service)) ? [path.join(repoRoot, 'services', service, 'dist', 'main.js')] : source;
}
