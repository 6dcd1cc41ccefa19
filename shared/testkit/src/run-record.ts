/**
 * What a mocha run did, file by file, from the runner's events: the time in hooks (where
 * infrastructure starts) and in tests, the tests that passed, and (tier.ts) the infrastructure each
 * file started. From it: the tier check (a file in the wrong tier fails the run, in either
 * direction) and, when BROKKR_TEST_TIMES names a file, one JSON line per test file appended to it
 * (scripts/test-times.ts sums them up).
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { infrastructureUses, setCurrentFile, UNIT_TEST_SUFFIX, type InfrastructureUse } from './tier.ts';
import { repoRoot } from '@brokkr/infra';

export const TIMES_ENV = 'BROKKR_TEST_TIMES';

interface FileRecord {
  hookMs: number;
  testMs: number;
  passed: number;
  failed: number;
  firstStart: number;
  lastEnd: number;
}

const files = new Map<string, FileRecord>();

function recordOf(file: string): FileRecord {
  let record = files.get(file);
  if (!record) {
    record = { hookMs: 0, testMs: 0, passed: 0, failed: 0, firstStart: performance.now(), lastEnd: performance.now() };
    files.set(file, record);
  }
  return record;
}

/** Follows the runner's events: which file runs now (tier.ts attributes infrastructure to it) and its times. */
export function recordRun(runner: Mocha.Runner): void {
  const started = new Map<Mocha.Runnable, number>();
  const begin = (runnable: Mocha.Runnable) => {
    setCurrentFile(runnable.file);
    if (runnable.file) recordOf(runnable.file);
    started.set(runnable, performance.now());
  };
  const end = (kind: 'hookMs' | 'testMs') => (runnable: Mocha.Runnable) => {
    const t0 = started.get(runnable);
    started.delete(runnable);
    if (!runnable.file || t0 === undefined) return;
    const record = recordOf(runnable.file);
    record[kind] += performance.now() - t0;
    record.lastEnd = performance.now();
  };
  runner.on('suite', (suite: Mocha.Suite) => setCurrentFile(suite.file));
  runner.on('hook', begin);
  runner.on('hook end', end('hookMs'));
  runner.on('test', begin);
  runner.on('test end', end('testMs'));
  runner.on('pass', (test: Mocha.Runnable) => test.file && recordOf(test.file).passed++);
  runner.on('fail', (test: Mocha.Runnable) => test.file && recordOf(test.file).failed++);
}

/** Every test of the run, counted by file. */
function testsByFile(suite: Mocha.Suite, counts = new Map<string, number>()): Map<string, number> {
  for (const test of suite.tests) if (test.file) counts.set(test.file, (counts.get(test.file) ?? 0) + 1);
  for (const child of suite.suites) testsByFile(child, counts);
  return counts;
}

const relative = (file: string) => path.relative(repoRoot, file);

/**
 * The files in the wrong tier: a *.unit.test.ts file that started infrastructure, and a file
 * named otherwise whose every test ran and passed without starting any (it belongs in the fast
 * tier). A file some of whose tests were skipped, filtered out (--grep, .only) or failed is not
 * judged: what it would have started is unknown.
 */
export function tierMistakes(root: Mocha.Suite): string[] {
  const uses = infrastructureUses();
  const mistakes: string[] = [];
  for (const [file, total] of testsByFile(root)) {
    const used = uses.get(file);
    if (file.endsWith(UNIT_TEST_SUFFIX) && used) {
      mistakes.push(`${relative(file)} starts ${[...used.keys()].join(', ')}: name it *.test.ts (the full tier)`);
    } else if (!file.endsWith(UNIT_TEST_SUFFIX) && !used && files.get(file)?.passed === total && total > 0) {
      mistakes.push(`${relative(file)} starts no infrastructure: name it *${UNIT_TEST_SUFFIX} so the fast tier runs it`);
    }
  }
  return mistakes;
}

function summary(use: InfrastructureUse | undefined): Record<string, { count: number; ms: number }> {
  return Object.fromEntries([...(use ?? [])].map(([what, u]) => [what, { count: u.count, ms: Math.round(u.ms) }]));
}

/** Appends one JSON line per file of this run to BROKKR_TEST_TIMES, when set. */
export function writeTimes(): void {
  const out = process.env[TIMES_ENV];
  if (!out) return;
  const uses = infrastructureUses();
  const lines = [...files].map(([file, r]) =>
    JSON.stringify({
      file: relative(file),
      ms: Math.round(r.lastEnd - r.firstStart),
      hookMs: Math.round(r.hookMs),
      testMs: Math.round(r.testMs),
      passed: r.passed,
      failed: r.failed,
      infrastructure: summary(uses.get(file)),
    }),
  );
  appendFileSync(out, lines.map((l) => `${l}\n`).join(''));
}
