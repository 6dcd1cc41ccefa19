/**
 * Sums up a BROKKR_TEST_TIMES file (one JSON line per test file, written by the testkit's run
 * record: shared/testkit/src/run-record.ts):
 *
 *     BROKKR_TEST_TIMES=/tmp/times.jsonl npm test
 *     node --import tsx scripts/test-times.ts /tmp/times.jsonl [how many slowest files, default 25]
 *
 * Prints the time per package (in hooks, where infrastructure starts, and in tests), what each
 * kind of infrastructure cost in all, and the slowest files.
 */
import { readFileSync } from 'node:fs';

interface FileTimes {
  file: string;
  ms: number;
  hookMs: number;
  testMs: number;
  passed: number;
  failed: number;
  infrastructure: Record<string, { count: number; ms: number }>;
}

const s = (ms: number) => (ms / 1000).toFixed(1).padStart(7);

function packageOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'test' ? 'test (repository)' : `${parts[0]}/${parts[1]}`;
}

function byPackage(files: FileTimes[]): void {
  const packages = new Map<string, { files: number; ms: number; hookMs: number; testMs: number }>();
  for (const f of files) {
    const p = packages.get(packageOf(f.file)) ?? { files: 0, ms: 0, hookMs: 0, testMs: 0 };
    packages.set(packageOf(f.file), { files: p.files + 1, ms: p.ms + f.ms, hookMs: p.hookMs + f.hookMs, testMs: p.testMs + f.testMs });
  }
  console.log('package                          files   total s  hooks s  tests s');
  for (const [name, p] of [...packages].sort((a, b) => b[1].ms - a[1].ms))
    console.log(`${name.padEnd(32)} ${String(p.files).padStart(5)} ${s(p.ms)}  ${s(p.hookMs)}  ${s(p.testMs)}`);
}

/** Child processes are counted apart: most are the servers and services already listed. */
function byInfrastructure(files: FileTimes[]): void {
  const kinds = new Map<string, { count: number; ms: number; files: number }>();
  for (const f of files) {
    for (const [what, use] of Object.entries(f.infrastructure)) {
      const kind = what.startsWith('child process') ? what : what.replace(/^process .*/, 'process (a test fixture)');
      const k = kinds.get(kind) ?? { count: 0, ms: 0, files: 0 };
      kinds.set(kind, { count: k.count + use.count, ms: k.ms + use.ms, files: k.files + 1 });
    }
  }
  console.log('\ninfrastructure (time to start, summed)       count  files  total s');
  for (const [kind, k] of [...kinds].sort((a, b) => b[1].ms - a[1].ms || b[1].count - a[1].count))
    console.log(`${kind.slice(0, 44).padEnd(44)} ${String(k.count).padStart(6)} ${String(k.files).padStart(6)} ${s(k.ms)}`);
}

function slowest(files: FileTimes[], n: number): void {
  console.log(`\nthe ${n} slowest files                                            total s  hooks s  tests s`);
  for (const f of [...files].sort((a, b) => b.ms - a.ms).slice(0, n))
    console.log(`${f.file.slice(0, 64).padEnd(64)} ${s(f.ms)}  ${s(f.hookMs)}  ${s(f.testMs)}`);
}

function main(): void {
  const [file, top = '25'] = process.argv.slice(2);
  if (!file) throw new Error('usage: scripts/test-times.ts <BROKKR_TEST_TIMES file> [n]');
  const files = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FileTimes);
  const total = files.reduce((sum, f) => sum + f.ms, 0);
  const hooks = files.reduce((sum, f) => sum + f.hookMs, 0);
  console.log(`${files.length} test files: ${s(total).trim()} s in them, ${s(hooks).trim()} s of it in hooks\n`);
  byPackage(files);
  byInfrastructure(files);
  slowest(files, Number(top));
}

main();
