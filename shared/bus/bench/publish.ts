/**
 * JetStream publish micro-benchmark: the client's request path (`js.publish`, what publishJson did
 * before ADR 0024) against the pipelined AckPublisher (publishJson now), on a real nats-server.
 * Prints CPU per publish of this process (process.cpuUsage: user + system; the server's CPU is
 * the same for both, they send the same messages) and publishes per second, for N publishes with
 * 1, 64 and all N in flight. Rounds alternate old/new; the medians are printed.
 *
 *   flock /tmp/brokkr-heavy.lock bash scripts/with-node.sh node --import tsx --conditions=development shared/bus/bench/publish.ts
 *
 * Environment: BENCH_N (20000), BENCH_ROUNDS (3).
 */
import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { JetStreamClient } from '@nats-io/jetstream';
import { createLogger } from '@brokkr/logger';
import { startNats } from '@brokkr/infra';
import { connectBus, ensureStreams, injectTraceContext, publishJson, STREAMS, SUBJECTS, type Bus } from '@brokkr/bus';

const N = Number(process.env.BENCH_N ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WINDOWS: [string, number][] = [
  ['1 in flight', 1],
  ['64 in flight', 64],
  [`all in flight`, N],
];

type Publish = (js: JetStreamClient, i: number, runId: string) => Promise<unknown>;

/** An outbox row's envelope, as the api publishes one per deployment object. */
function envelope(i: number, runId: string) {
  return {
    id: `${runId}-${i}`,
    event_type: 'deployment.created',
    timestamp: new Date().toISOString(),
    data: { deployment_object_id: randomUUID(), stack_id: randomUUID(), sequence_id: i, yaml_checksum: 'f'.repeat(64), is_deletion: false },
  };
}

const subject = SUBJECTS.event('deployment.created');

/** publishJson as it was: one `js.publish` (a request with its own timer and mux entry) per row. */
const oldPath: Publish = (js, i, runId) => {
  const e = envelope(i, runId);
  return js.publish(subject, JSON.stringify(e), { msgID: e.id, headers: injectTraceContext(natsHeaders()), timeout: 5000 });
};

const newPath: Publish = (js, i, runId) => {
  const e = envelope(i, runId);
  return publishJson(js, subject, e, { msgID: e.id, timeoutMs: 5000 });
};

async function run(js: JetStreamClient, publish: Publish, window: number): Promise<{ cpuUs: number; perSecond: number }> {
  const runId = randomUUID();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) await publish(js, i, runId);
  };
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.min(window, N) }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / N, perSecond: N / seconds };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const nats = await startNats();
  const bus: Bus = await connectBus({ url: nats.url, name: 'bench-publish', logger: createLogger({ service: 'bench', level: 'silent' }) });
  try {
    await ensureStreams(bus.jsm);
    // Warm-up: JIT both paths.
    for (const p of [oldPath, newPath]) await run(bus.js, p, 64);
    console.log(`JetStream publish, N=${N} per round, ${ROUNDS} rounds (old/new alternating), medians; CPU = this process only`);
    console.log('in flight       path                 CPU µs/publish   publishes/s');
    for (const [label, window] of WINDOWS) {
      const results = { old: [] as { cpuUs: number; perSecond: number }[], new: [] as { cpuUs: number; perSecond: number }[] };
      for (let r = 0; r < ROUNDS; r++) {
        results.old.push(await run(bus.js, oldPath, window));
        results.new.push(await run(bus.js, newPath, window));
        await bus.jsm.streams.purge(STREAMS.events);
      }
      for (const [name, rs] of [
        ['js.publish (old)', results.old],
        ['AckPublisher (new)', results.new],
      ] as const) {
        const cpu = median(rs.map((x) => x.cpuUs));
        const rate = median(rs.map((x) => x.perSecond));
        console.log(`${label.padEnd(15)} ${name.padEnd(20)} ${cpu.toFixed(1).padStart(14)}   ${Math.round(rate).toString().padStart(11)}`);
      }
    }
  } finally {
    await bus.close();
    await nats.stop();
  }
}

await main();
