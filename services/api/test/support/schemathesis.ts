import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scriptsDir } from '@brokkr/infra';
import { readEventStream, type FuzzFailure } from './schemathesis-events.ts';

export type { FuzzFailure } from './schemathesis-events.ts';

/**
 * Runs schemathesis (the OpenAPI conformance fuzzer, from PyPI) against a running api. The
 * pinned version lives in a cached virtualenv that scripts/lib/install-schemathesis.sh creates
 * on first use, so `npm test` works on a bare machine with python3.
 */

/** Path of the `st` executable; installs it first when missing (progress on stderr). */
export function installSchemathesis(): string {
  const out = execFileSync('bash', [path.join(scriptsDir, 'lib', 'install-schemathesis.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
  return out.toString().trim();
}

export interface FuzzRun {
  st: string;
  /** e.g. http://127.0.0.1:1234/docs/openapi.json */
  schemaUrl: string;
  /** The schemathesis.toml contents (operations, dictionaries, parameters). */
  config: string;
  /** Sent as `Authorization: Bearer <pak>` on every request. */
  pak: string;
  maxExamples: number;
  seed: number;
  checks: readonly string[];
  phases: readonly string[];
  /** Kills the run after this long (the test then fails). */
  timeoutMs: number;
}

export interface FuzzResult {
  exitCode: number | null;
  operations: number;
  cases: number;
  failures: FuzzFailure[];
  /** Network or schema errors schemathesis reported besides check failures. */
  errors: string[];
  durationMs: number;
  /** The CLI's own output, for the failure message. */
  output: string;
}

/** Runs in `cwd` (a temp dir): schemathesis keeps a `.schemathesis/` cache in its working directory. */
function spawnSt(run: FuzzRun, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // No telemetry, no colours, no spinner: the output goes into a test failure message.
    const env = { ...process.env, SCHEMATHESIS_TELEMETRY: 'false', NO_COLOR: '1', COLUMNS: '200' };
    const child = spawn(run.st, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Runs one bounded schemathesis pass; counts come from its NDJSON event stream. */
export async function runSchemathesis(run: FuzzRun): Promise<FuzzResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'brokkr-fuzz-'));
  try {
    const configPath = path.join(dir, 'schemathesis.toml');
    const eventsPath = path.join(dir, 'events.ndjson');
    writeFileSync(configPath, run.config);
    const args = [
      '--config-file',
      configPath,
      'run',
      run.schemaUrl,
      '--header',
      `Authorization: Bearer ${run.pak}`,
      '--checks',
      run.checks.join(','),
      '--phases',
      run.phases.join(','),
      '--max-examples',
      String(run.maxExamples),
      '--seed',
      String(run.seed),
      '--workers',
      '1',
      '--generation-database',
      'none',
      '--no-color',
      '--suppress-health-check',
      'all',
      '--request-timeout',
      '10',
      '--report',
      'ndjson',
      '--report-ndjson-path',
      eventsPath,
    ];
    const started = Date.now();
    const { code, output } = await spawnSt(run, args, dir);
    const durationMs = Date.now() - started;
    const summary = readEventStream(eventsPath);
    return { exitCode: code, durationMs, output, ...summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
