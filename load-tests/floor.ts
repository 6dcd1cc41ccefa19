/**
 * The floor under the api's per-request cost (`npm run bench:floor`): prints figures, asserts
 * nothing. Runs load-tests/floor/server.mjs — the least a Node process can do for an agent event
 * report (no framework, no authentication, no validation) — at BENCH_WRITE_RATE (250) req/s of the
 * same k6 requests bench:api sends to `POST /agents/{id}/events`, in three modes:
 *   http   read the JSON body, answer 201 with a JSON row
 *   pg     + one prepared INSERT … RETURNING on a pool of 20 (our writes are one statement, ADR 0021)
 *   nats   + a JetStream publish acknowledged in the background (our outbox publisher)
 * Put its `node ms` next to bench:api's `api ms` for agent-events at the same rate: the difference
 * is what authentication, validation, routing, metrics and the outbox/wake-up bookkeeping cost;
 * the floor itself is what any Node implementation pays (Brokkr's broker is compiled Rust).
 * Environment: BENCH_WRITE_RATE (250), BENCH_SECONDS (20), BENCH_ROUNDS (2: modes in order, then reversed).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, repoRoot, startNats, startPostgres } from '@brokkr/infra';
import { ensureK6, runStep, type StepResult } from './api-k6.ts';

const RATE = Number(process.env.BENCH_WRITE_RATE ?? 250);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const MODES = ['http', 'pg', 'nats'] as const;
type Mode = (typeof MODES)[number];

interface FloorEnv {
  env: Record<string, string>;
  k6: string;
  dataFile: string;
  postgresPid: number;
}

async function runMode(mode: Mode, { env, k6, dataFile, postgresPid }: FloorEnv): Promise<StepResult> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repoRoot, 'load-tests', 'floor', 'server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, ...env, FLOOR_MODE: mode, FLOOR_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => c.toString().includes('listening') && resolve());
      child.once('exit', (code) => reject(new Error(`floor server (${mode}) exited with ${code}`)));
    });
    const step = { target: 'agent-events' as const, urls: [`http://127.0.0.1:${port}`], dataFile, apiPids: [child.pid!], postgresPid };
    await runStep(k6, { ...step, rate: RATE, seconds: 5 }); // warm-up: JIT, pool, VUs
    return await runStep(k6, { ...step, rate: RATE, seconds: SECONDS });
  } finally {
    child.kill();
  }
}

async function main(): Promise<void> {
  const { bin: k6 } = await ensureK6();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-bench-floor-'));
  const postgres = await startPostgres({});
  const nats = await startNats();
  try {
    const postgresPid = Number(readFileSync(path.join(postgres.dir!, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const dataFile = path.join(dir, 'fleet.json');
    const agents = Array.from({ length: 1000 }, (_, i) => ({ id: `agent-${i}`, pak: `brokkr_floor_${i}`, object: `object-${i}` }));
    await writeFile(dataFile, JSON.stringify({ agents, stacks: [], generatorPak: 'unused' }));
    const env = { FLOOR_DATABASE_URL: postgres.url, FLOOR_NATS_URL: nats.url };
    const results = new Map<Mode, StepResult[]>(MODES.map((m) => [m, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
        console.error(`[bench:floor] round ${round + 1}: ${mode} at ${RATE} req/s for ${SECONDS} s`);
        results.get(mode)!.push(await runMode(mode, { env, k6, dataFile, postgresPid }));
      }
    }
    console.log(`POST /agents/{id}/events on a bare Node server, ${RATE} req/s, ${SECONDS} s per step, node ${process.version}`);
    console.log('mode    round   p50       p99       node ms   pg ms');
    for (const [mode, steps] of results) {
      steps.forEach((s, i) =>
        console.log(
          `${mode.padEnd(8)}${String(i + 1).padEnd(8)}${`${s.p50.toFixed(1)} ms`.padEnd(10)}${`${s.p99.toFixed(1)} ms`.padEnd(10)}` +
            `${s.apiMsPerRequest.toFixed(2).padEnd(10)}${s.pgMsPerRequest.toFixed(2)}`,
        ),
      );
    }
    console.log('node ms / pg ms: CPU milliseconds per request of the server process / of PostgreSQL (all its processes).');
  } finally {
    await Promise.allSettled([nats.stop(), postgres.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
