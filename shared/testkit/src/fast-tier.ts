/**
 * Loaded by .mocharc.fast.cjs instead of the global fixture: the fast tier (tier.ts) starts no
 * PostgreSQL, and every child process or testkit starter a test asks for throws, saying where
 * that test belongs.
 */
import { guardChildProcesses } from './child-processes.ts';
import { recordRun, writeTimes } from './run-record.ts';
import { TIER_ENV } from './tier.ts';

process.env[TIER_ENV] = 'fast';
guardChildProcesses();

export function mochaGlobalSetup(this: Mocha.Runner): void {
  recordRun(this);
}

export function mochaGlobalTeardown(): void {
  writeTimes();
}
