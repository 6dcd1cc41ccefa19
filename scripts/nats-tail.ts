/**
 * `npm run nats:tail [-- --audit --core --from-start --subject brokkr.events.stack.> --server nats://…]`
 *
 * Credentials: BROKKR__NATS__USER and BROKKR__NATS__PASSWORD (or --user, --password), normally the
 * read-only `integration` user (`npm start` prints its password; compose and the chart set one).
 *
 * Prints Brokkr's events as they reach JetStream: an example of an integration that reads the
 * public NATS contract (docs/nats-subjects.md). It uses an *ordered* consumer, which is
 * ephemeral: nothing is acknowledged, no state is left on the server, and the messages still go
 * to the real durable consumers (webhook-dispatcher, audit-writer) untouched. An integration that
 * must not miss events uses its own durable consumer instead (see the document).
 */
import { parseArgs } from 'node:util';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, type JsMsg } from '@nats-io/jetstream';
import { STREAMS, SUBJECTS } from '@brokkr/bus';

const { values: args } = parseArgs({
  options: {
    server: { type: 'string', default: process.env.BROKKR__NATS__URL ?? 'nats://127.0.0.1:4222' },
    user: { type: 'string', default: process.env.BROKKR__NATS__USER },
    password: { type: 'string', default: process.env.BROKKR__NATS__PASSWORD },
    subject: { type: 'string', default: SUBJECTS.eventsAll },
    audit: { type: 'boolean', default: false },
    core: { type: 'boolean', default: false },
    'from-start': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

function print(kind: string, subject: string, data: string, meta: Record<string, unknown>): void {
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ kind, subject, ...meta, data: safeJson(data) })}\n`);
    return;
  }
  const tags = Object.entries(meta)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  process.stdout.write(`${new Date().toISOString()} ${kind.padEnd(5)} ${subject}${tags ? ` ${tags}` : ''}\n  ${data}\n`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Follows one stream from now on (or from its first message) through an ordered consumer. */
async function tailStream(nc: NatsConnection, stream: string, subject: string, kind: string): Promise<void> {
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: subject,
    deliver_policy: args['from-start'] ? DeliverPolicy.All : DeliverPolicy.New,
  });
  const messages = await consumer.consume();
  for await (const m of messages as AsyncIterable<JsMsg>) {
    print(kind, m.subject, m.string(), {
      seq: m.seq,
      'msg-id': m.headers?.get('Nats-Msg-Id') ?? '-',
      traceparent: m.headers?.get('traceparent') || '-',
    });
  }
}

/** Core subjects are hints with no history: only what happens while we listen is shown. */
function tailCore(nc: NatsConnection): void {
  for (const subject of ['brokkr.notify.>', 'brokkr.cache.invalidate.>', SUBJECTS.configReload]) {
    nc.subscribe(subject, { callback: (_err, m: Msg) => print('core', m.subject, m.string(), {}) });
  }
}

async function main(): Promise<void> {
  const credentials = args.user ? { user: args.user, pass: args.password ?? '' } : {};
  const nc = await connect({ servers: args.server.split(','), name: 'brokkr-nats-tail', maxReconnectAttempts: -1, ...credentials });
  process.stderr.write(
    `nats:tail: ${args.subject}${args.audit ? ` + ${SUBJECTS.auditAll}` : ''}${args.core ? ' + core hints' : ''} on ${nc.getServer()} (Ctrl-C to stop)\n`,
  );
  const stop = () => void nc.drain().finally(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (args.core) tailCore(nc);
  const tails = [tailStream(nc, STREAMS.events, args.subject, 'event')];
  if (args.audit) tails.push(tailStream(nc, STREAMS.audit, SUBJECTS.auditAll, 'audit'));
  await Promise.all(tails);
}

main().catch((err: unknown) => {
  process.stderr.write(`nats:tail: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
