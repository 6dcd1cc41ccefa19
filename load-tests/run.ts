/**
 * `npm run bench`: every benchmark in turn, each in its own process (the `bench:*` scripts of the
 * root package.json, so a new one is picked up without editing this file), then one line per
 * benchmark with its outcome and wall time. Their figures are what they print; nothing here judges
 * them. BENCH_ONLY=api,agent runs a subset.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

const scripts = Object.keys((JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts).filter(
  (name) => name.startsWith('bench:'),
);
const only = process.env.BENCH_ONLY?.split(',').map((s) => `bench:${s.trim()}`);
const selected = only ? scripts.filter((s) => only.includes(s)) : scripts;

function run(script: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: 'inherit' });
    child.once('exit', (code) => resolve(code));
  });
}

const cpus = os.cpus();
process.stdout.write(
  `benchmarks: ${selected.join(', ')} on ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ` +
    `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}\n`,
);
const outcomes: string[] = [];
for (const script of selected) {
  process.stdout.write(`\n\x1b[1m== npm run ${script}\x1b[0m\n`);
  const started = Date.now();
  const code = await run(script);
  const took = ((Date.now() - started) / 1000).toFixed(0);
  outcomes.push(`${code === 0 ? 'ok     ' : `FAILED (exit ${code})`} ${script} (${took} s)`);
}
process.stdout.write(`\n\x1b[1m== benchmarks\x1b[0m\n${outcomes.map((l) => `  ${l}`).join('\n')}\n`);
process.exitCode = outcomes.some((l) => l.startsWith('FAILED')) ? 1 : 0;
