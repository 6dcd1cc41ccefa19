/**
 * Webhook delivery benchmark (`npm run bench:webhooks`): real api, dispatcher(s), Postgres and
 * NATS on this machine, a local receiver.
 *  1. End-to-end latency at a steady 200 events/s: `POST /stacks` → api commit (+ outbox) →
 *     JetStream → dispatcher → receiver. Measured from the event's `timestamp` (set inside the
 *     committing transaction) to its arrival at the receiver.
 *  2. Maximum deliveries/s with one and with two dispatcher replicas: a burst of events published
 *     to JetStream, timed from the first publish to the last arrival (intake + claim + POST + record).
 * Both use one receiver (one endpoint), so the per-endpoint limit (default 8 POSTs in flight per
 * replica) bounds the throughput; it is run with 8 and with 32.
 * Environment: BENCH_RATE (200), BENCH_SECONDS (20), BENCH_BURST (20000).
 */
import { randomUUID } from 'node:crypto';
import { publishJson, SUBJECTS } from '@brokkr/bus';
import { encrypt, generateSigningSecret, loadWebhookKey } from '@brokkr/crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import type { PostgresHandle } from '@brokkr/infra';
import { TestClient } from '@brokkr/testkit';
import {
  adminPak,
  freshStack,
  KEY_HEX,
  machine,
  percentile,
  spawnApi,
  spawnDispatcher,
  startBenchReceiver,
  startPostgresServer,
  waitFor,
} from './webhooks-support.ts';

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const BURST = Number(process.env.BENCH_BURST ?? 20_000);

/** Open loop: request i leaves at its scheduled time whatever the earlier ones are doing. */
async function drive(o: { api: TestClient; generatorId: string; count: number }): Promise<{ achieved: number; failures: number }> {
  const start = Date.now();
  const inFlight: Promise<unknown>[] = [];
  let failures = 0;
  for (let i = 0; i < o.count; i++) {
    const wait = start + (i * 1000) / RATE - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      o.api.post('/stacks', { name: `bench-${randomUUID()}`, generator_id: o.generatorId }).then((r) => {
        if (r.status !== 201) failures++;
      }),
    );
  }
  await Promise.all(inFlight);
  return { achieved: o.count / ((Date.now() - start) / 1000), failures };
}

async function latencyScenario(server: PostgresHandle): Promise<string> {
  const stack = await freshStack(server);
  const receiver = await startBenchReceiver();
  // When each event reached NATS, to split the latency into api (commit → publish) and dispatcher.
  const nc = await connect({ servers: stack.natsUrl });
  const published = new Map<string, number>();
  nc.subscribe(SUBJECTS.eventsAll, { callback: (_err, msg) => void published.set((msg.json() as { id: string }).id, Date.now()) });
  try {
    const { pak, hash } = adminPak();
    const api = new TestClient(await spawnApi(stack, hash), pak);
    await spawnDispatcher(stack);
    await api.must('POST', '/webhooks', { name: 'bench', url: receiver.url, event_types: ['stack.created'] });
    const generators = await api.must<{ id: string; name: string }[]>('GET', '/generators');
    const generatorId = generators.find((g) => g.name === 'admin-generator')!.id;

    // Warm-up (JIT, connection pools, the first claims) is sent but not measured.
    await drive({ api, generatorId, count: RATE * 2 });
    await waitFor(() => receiver.receipts.size >= RATE * 2, 60_000, 'the warm-up webhooks');
    receiver.receipts.clear();
    published.clear();
    const total = RATE * SECONDS;
    const { achieved, failures } = await drive({ api, generatorId, count: total });
    await waitFor(() => receiver.receipts.size >= total - failures, 60_000, 'every stack.created webhook');
    const { rows } = await stack.pool.query<{ event_id: string; created: number }>(
      'SELECT event_id, (extract(epoch FROM created_at) * 1000)::float8 AS created FROM webhook_deliveries',
    );
    const rowCreated = new Map(rows.map((r) => [r.event_id, r.created]));
    const split = [...receiver.receipts.values()].map((r) => {
      const event = JSON.parse(r.body) as { id: string; timestamp: string };
      const committed = Date.parse(event.timestamp);
      const onNats = published.get(event.id) ?? NaN;
      const created = rowCreated.get(event.id) ?? NaN;
      return { total: r.at - committed, api: onNats - committed, intake: created - onNats, delivery: r.at - created };
    });
    const line = (label: string, values: number[]) => {
      const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
      const ms = (v: number | undefined) => `${Math.round(v ?? NaN)} ms`.padEnd(8);
      return `  ${label.padEnd(30)} p50 ${ms(percentile(sorted, 50))} p90 ${ms(percentile(sorted, 90))} p99 ${ms(percentile(sorted, 99))} max ${ms(sorted.at(-1))}`;
    };
    return [
      `end-to-end latency after a 2 s warm-up, ${total} events at ${RATE}/s offered (${achieved.toFixed(0)}/s achieved, ${failures} failed writes), 1 api + 1 dispatcher:`,
      line(
        'api commit → receiver',
        split.map((s) => s.total),
      ),
      line(
        '  of which commit → NATS',
        split.map((s) => s.api),
      ),
      line(
        '  of which NATS → delivery row',
        split.map((s) => s.intake),
      ),
      line(
        '  of which row → receiver',
        split.map((s) => s.delivery),
      ),
    ].join('\n');
  } finally {
    await nc.close();
    await receiver.close();
    await stack.close();
  }
}

async function throughputScenario(server: PostgresHandle, replicas: number, hostConcurrency: number): Promise<string> {
  const stack = await freshStack(server);
  const receiver = await startBenchReceiver();
  const nc = await connect({ servers: stack.natsUrl });
  try {
    const key = loadWebhookKey(KEY_HEX);
    await stack.pool.query(
      `INSERT INTO webhook_subscriptions (name, url_encrypted, event_types, created_by, signing_secret_encrypted) VALUES ('bench', $1, '{*}', 'admin', $2)`,
      [encrypt(key, receiver.url), encrypt(key, generateSigningSecret())],
    );
    for (let i = 0; i < replicas; i++) await spawnDispatcher(stack, { BROKKR__BROKER__WEBHOOK_HOST_CONCURRENCY: String(hostConcurrency) });
    const js = jetstream(nc);
    const started = Date.now();
    for (let i = 0; i < BURST; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, BURST - i) }, () => {
          const event = { id: randomUUID(), event_type: 'deployment.applied', timestamp: new Date().toISOString(), data: { n: i } };
          return publishJson(js, SUBJECTS.event(event.event_type), event, { msgID: event.id });
        }),
      );
    }
    const published = Date.now();
    await waitFor(() => receiver.receipts.size >= BURST, 300_000, `${BURST} deliveries`);
    const last = Math.max(...[...receiver.receipts.values()].map((r) => r.at));
    const seconds = (last - started) / 1000;
    return `max throughput, ${replicas} dispatcher replica(s), ${hostConcurrency} POSTs in flight per replica to the one receiver: ${BURST} deliveries in ${seconds.toFixed(2)} s = ${(BURST / seconds).toFixed(0)} deliveries/s (events published in ${((published - started) / 1000).toFixed(2)} s)`;
  } finally {
    await nc.close();
    await receiver.close();
    await stack.close();
  }
}

const server = await startPostgresServer();
try {
  const lines = [`machine: ${machine()}`];
  process.stdout.write(`${lines[0]}\n`);
  const runs = [
    () => latencyScenario(server),
    // 8 is the default per-endpoint limit; 32 shows what one endpoint can take when allowed more.
    () => throughputScenario(server, 1, 8),
    () => throughputScenario(server, 2, 8),
    () => throughputScenario(server, 1, 32),
    () => throughputScenario(server, 2, 32),
  ];
  for (const run of runs) {
    const line = await run();
    process.stdout.write(`${line}\n`);
  }
} finally {
  // The server process is unref'd: keep the loop alive until it has really exited.
  const keepAlive = setInterval(() => undefined, 1000);
  await server.stop();
  clearInterval(keepAlive);
}
