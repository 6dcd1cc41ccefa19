/**
 * The two test tiers (docs/adr/0042-fast-test-tier.md). The fast tier (`npm run test:fast`,
 * .mocharc.fast.cjs) runs every `*.unit.test.ts` file in one mocha run with no PostgreSQL, NATS,
 * Kubernetes or child process; the full tier (`npm test`, .mocharc.cjs) runs every test file.
 *
 * Everything that starts infrastructure goes through `usingInfrastructure` (the testkit's
 * starters, and every child process: run-record.ts wraps node:child_process). In the fast tier it
 * throws, so a unit file that needs infrastructure fails loudly instead of running; in the full
 * tier it records which file started what and for how long, so the run can tell a file that
 * needed none (it belongs in the fast tier) and say where the time went.
 */
export const TIER_ENV = 'BROKKR_TEST_TIER';

/** The name that puts a test file in the fast tier. */
export const UNIT_TEST_SUFFIX = '.unit.test.ts';

export function fastTier(): boolean {
  return process.env[TIER_ENV] === 'fast';
}

/** What one test file started: each kind of infrastructure, how often, and the milliseconds it took. */
export type InfrastructureUse = Map<string, { count: number; ms: number }>;

let currentFile: string | undefined;
const uses = new Map<string, InfrastructureUse>();

/** Set by the run record from mocha's events: the file whose hook or test runs now. */
export function setCurrentFile(file: string | undefined): void {
  currentFile = file;
}

/** What each file of this run started, by file. */
export function infrastructureUses(): ReadonlyMap<string, InfrastructureUse> {
  return uses;
}

/** Throws in the fast tier, naming what was asked for and where such a test belongs. */
export function refuseInFastTier(what: string): void {
  if (!fastTier()) return;
  throw new Error(
    `${what}: the fast tier (npm run test:fast) starts no infrastructure and no child process. ` +
      `A test that needs one belongs in the full tier: name its file *.test.ts, not *${UNIT_TEST_SUFFIX}`,
  );
}

function record(what: string, ms: number): void {
  if (currentFile === undefined) return;
  const use = uses.get(currentFile) ?? new Map<string, { count: number; ms: number }>();
  uses.set(currentFile, use);
  const entry = use.get(what) ?? { count: 0, ms: 0 };
  use.set(what, { count: entry.count + 1, ms: entry.ms + ms });
}

/** For what starts synchronously (a child process): refused in the fast tier, recorded in the full one. */
export function needsInfrastructure(what: string): void {
  refuseInFastTier(what);
  record(what, 0);
}

/** Runs `fn` and records it under `what` against the file that was running when it began. */
async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const file = currentFile;
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    const running = currentFile;
    currentFile = file;
    record(what, performance.now() - t0);
    currentFile = running;
  }
}

/** Starts infrastructure (refused in the fast tier) and records what it was and how long it took. */
export function usingInfrastructure<T>(what: string, start: () => Promise<T>): Promise<T> {
  refuseInFastTier(what);
  return timed(what, start);
}

/** Wraps a handle's stop so that the run records what stopping it took, as `<what>: stop`. */
export function timedStop<A extends unknown[], T>(what: string, stop: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  return (...args: A) => timed(`${what}: stop`, () => stop(...args));
}
