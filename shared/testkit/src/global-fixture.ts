/**
 * Mocha global fixture of the full tier (loaded through .mocharc.cjs `require`). The run's one
 * PostgreSQL server and its migrated template database, which every test file clones
 * (`createTestDatabase`: tens of milliseconds, where migrating takes seconds), start when a test
 * first asks for a database (postgres-server.ts); the teardown stops them.
 *
 * It also records the run (run-record.ts): which file started what infrastructure, including every
 * child process; at the end a file in the wrong tier fails the run, and BROKKR_TEST_TIMES gets
 * the time each file took.
 */
import { stopTestPostgres } from './postgres-server.ts';
import { guardChildProcesses } from './child-processes.ts';
import { recordRun, tierMistakes, writeTimes } from './run-record.ts';

// Before any test file loads, so that their promisify(execFile) wraps the guard.
guardChildProcesses();

/** `this` is mocha's runner; a benchmark that borrows the fixture calls it without one. */
export async function mochaGlobalSetup(this: Mocha.Runner | void): Promise<void> {
  if (this) recordRun(this);
}

export async function mochaGlobalTeardown(this: Mocha.Runner | void): Promise<void> {
  writeTimes();
  await stopTestPostgres();
  if (!this) return;
  const mistakes = tierMistakes(this.suite);
  if (mistakes.length > 0) throw new Error(`test files in the wrong tier (docs/adr/0042-fast-test-tier.md):\n  ${mistakes.join('\n  ')}`);
}
