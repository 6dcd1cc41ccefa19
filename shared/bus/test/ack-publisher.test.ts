import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { createLogger } from '@brokkr/logger';
import { eventually, testOnlyBusSettings, testOnlyNatsOptions, useTestInfra } from '@brokkr/testkit';
import {
  AckPublisher,
  ackPublisherFor,
  connectBus,
  ensureStreams,
  publishJson,
  publishOutboxRows,
  PublishAckError,
  STREAMS,
  SUBJECTS,
  type Bus,
  type PublishableOutboxRow,
} from '@brokkr/bus';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

async function rejection(promise: Promise<unknown>): Promise<PublishAckError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the publish should have failed').to.be.instanceOf(PublishAckError);
  return err as PublishAckError;
}

function outboxRow(eventType: string, traceparent?: string): PublishableOutboxRow {
  const id = randomUUID();
  // Keys deliberately out of order, as a row read back from jsonb may have them.
  const payload = { data: { n: 1 }, timestamp: '2026-01-01T00:00:00Z', event_type: eventType, id };
  return { id, subject: SUBJECTS.event(eventType), payload, headers: traceparent ? { traceparent } : null };
}

/**
 * The pipelined publisher against a real nats-server with JetStream. A publish nobody will ever
 * acknowledge is made real by a subject no stream covers but a plain core subscriber listens on:
 * the server then has a responder (no "no responders" status) and the subscriber never answers.
 */
describe('@brokkr/bus AckPublisher', () => {
  const infra = useTestInfra({ db: false, nats: true });
  let bus: Bus;

  before(async () => {
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'bus-ack-test', logger });
    await ensureStreams(bus.jsm);
  });

  after(async () => {
    await bus?.close();
  });

  const stored = (seq: number) => bus.jsm.streams.getMessage(STREAMS.events, { seq });

  it('resolves a publish with the stream ack', async () => {
    const ack = await ackPublisherFor(bus.nc).publish(SUBJECTS.event('ack.one'), '{"a":1}', { msgID: 'ack-one' });
    expect(ack.stream).to.equal(STREAMS.events);
    expect(ack.seq).to.be.a('number').greaterThan(0);
    expect(ack.duplicate).to.equal(false);
    const m = await stored(ack.seq);
    expect(m?.header.get('Nats-Msg-Id')).to.equal('ack-one');
    expect(m?.json()).to.deep.equal({ a: 1 });
  });

  it('uses one publisher per connection, also for clients made by jetstream(nc)', async () => {
    expect(ackPublisherFor(bus.nc)).to.equal(ackPublisherFor(bus.nc));
    const ack = await publishJson(jetstream(bus.nc), SUBJECTS.event('ack.raw-client'), {}, { msgID: randomUUID() });
    expect(ack.stream).to.equal(STREAMS.events);
  });

  it('reports a repeated msgID as a duplicate of the stored message', async () => {
    const subject = SUBJECTS.event('ack.dup');
    const first = await publishJson(bus.js, subject, { id: 'd' }, { msgID: 'ack-dup' });
    const second = await publishJson(bus.js, subject, { id: 'd' }, { msgID: 'ack-dup' });
    expect(first.duplicate).to.equal(false);
    expect(second.duplicate).to.equal(true);
    expect(second.seq).to.equal(first.seq);
  });

  it('rejects at once when no stream takes the subject, without waiting for the timeout', async () => {
    // A minute-long timeout: only the server's "no responders" answer can end this publish.
    const err = await rejection(publishJson(bus.js, 'nostream.at.all', {}, { msgID: 'x', timeoutMs: 60_000 }));
    expect(err.reason).to.equal('no-stream');
    expect(err.code).to.equal(503);
    expect(err.message).to.contain('nostream.at.all');
    expect(ackPublisherFor(bus.nc).pending).to.equal(0);
  });

  it('times out a publish whose ack never comes', async () => {
    const silent = await connect(testOnlyNatsOptions(infra.nats));
    try {
      const received: string[] = [];
      silent.subscribe('silent.subject', { callback: (_err, msg) => void received.push(msg.string()) });
      await silent.flush();
      const err = await rejection(publishJson(bus.js, 'silent.subject', { q: 1 }, { msgID: 'silent', timeoutMs: 200 }));
      expect(err.reason).to.equal('timeout');
      expect(err.subject).to.equal('silent.subject');
      expect(received).to.deep.equal(['{"q":1}']);
      expect(ackPublisherFor(bus.nc).pending).to.equal(0);
    } finally {
      await silent.close();
    }
  });

  it('keeps publish order for many publishes in flight', async () => {
    const subject = SUBJECTS.event('ack.order');
    const ids = Array.from({ length: 2000 }, (_, i) => `order-${i}`);
    const publisher = ackPublisherFor(bus.nc);
    const acks = ids.map((id, i) => publishJson(bus.js, subject, { i }, { msgID: id }));
    expect(publisher.pending).to.equal(ids.length);
    const seqs = (await Promise.all(acks)).map((a) => a.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).to.equal(seqs[i - 1]! + 1);
    const last = await stored(seqs.at(-1)!);
    expect(last?.header.get('Nats-Msg-Id')).to.equal(ids.at(-1));
    expect(last?.json()).to.deep.equal({ i: ids.length - 1 });
  });

  it('carries the trace parent and extra headers', async () => {
    const ack = await publishJson(
      bus.js,
      SUBJECTS.event('ack.trace'),
      {},
      { msgID: 'trace', traceparent: TRACEPARENT, headers: { 'x-k': 'v' } },
    );
    const m = await stored(ack.seq);
    expect(m?.header.get('traceparent')).to.equal(TRACEPARENT);
    expect(m?.header.get('x-k')).to.equal('v');
  });

  it('rejects what is pending when the connection closes, and every later publish', async () => {
    const nc: NatsConnection = await connect(testOnlyNatsOptions(infra.nats));
    const silent = await connect(testOnlyNatsOptions(infra.nats));
    try {
      silent.subscribe('silent.close', { callback: () => undefined });
      await silent.flush();
      const publisher = new AckPublisher(nc);
      const pending = [1, 2, 3].map((n) => publisher.publish('silent.close', String(n), { timeoutMs: 60_000 }));
      await nc.flush();
      expect(publisher.pending).to.equal(3);
      await nc.close();
      for (const p of pending) {
        const err = await rejection(p);
        expect(err.reason).to.equal('closed');
        expect(err.subject).to.equal('silent.close');
      }
      expect((await rejection(publisher.publish('silent.close', 'late'))).reason).to.equal('closed');
      expect((await rejection(publishJson(jetstream(nc), SUBJECTS.event('ack.closed'), {}, { msgID: 'c' }))).reason).to.equal('closed');
    } finally {
      if (!nc.isClosed()) await nc.close();
      await silent.close();
    }
  });

  it('publishes outbox rows: ids of acknowledged rows (duplicates too), envelope order, trace parent', async () => {
    const rows = [outboxRow('ack.outbox', TRACEPARENT), outboxRow('ack.outbox')];
    const missing = { ...outboxRow('ack.outbox'), subject: 'nostream.outbox' };
    const first = await publishOutboxRows(bus.js, [rows[0]!, missing, rows[1]!]);
    expect(first.published).to.deep.equal([rows[0]!.id, rows[1]!.id]);
    expect(first.firstError).to.be.instanceOf(PublishAckError).with.property('reason', 'no-stream');
    const again = await publishOutboxRows(bus.js, rows);
    expect(again).to.deep.equal({ published: rows.map((r) => r.id) });

    const m = await bus.jsm.streams.getMessage(STREAMS.events, { last_by_subj: SUBJECTS.event('ack.outbox') });
    expect(m?.header.get('Nats-Msg-Id')).to.equal(rows[1]!.id);
    expect(m?.header.get('traceparent')).to.equal('');
    expect(m?.string()).to.equal(
      JSON.stringify({ id: rows[1]!.id, event_type: 'ack.outbox', timestamp: '2026-01-01T00:00:00Z', data: { n: 1 } }),
    );
    const traced = await bus.jsm.streams.getMessage(STREAMS.events, { seq: m!.seq - 1 });
    expect(traced?.header.get('Nats-Msg-Id')).to.equal(rows[0]!.id);
    expect(traced?.header.get('traceparent')).to.equal(TRACEPARENT);
  });

  it('goes on publishing after the server restarts', async () => {
    await publishJson(bus.js, SUBJECTS.event('ack.restart'), {}, { msgID: randomUUID() });
    await infra.restartNats();
    // A publish written to the dead socket is lost and times out; the same msgID is retried, as
    // the relay does. Publishes made while reconnecting are sent after the client re-subscribed.
    const msgID = randomUUID();
    const ack = await eventually(() => publishJson(bus.js, SUBJECTS.event('ack.restart'), { after: true }, { msgID, timeoutMs: 2000 }), {
      timeoutMs: 30_000,
      what: 'a publish acknowledged after the restart',
    });
    expect(ack.stream).to.equal(STREAMS.events);
    expect((await stored(ack.seq))?.json()).to.deep.equal({ after: true });
  });
});
