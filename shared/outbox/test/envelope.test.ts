import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { connectBus, ensureStreams, publishOutboxRows, STREAMS, type Bus } from '@brokkr/bus';
import { buildEvent, outboxRowSchema, parseEventEnvelope, type EventEnvelope } from '@brokkr/contracts';
import { createLogger } from '@brokkr/logger';
import { testOnlyBusSettings, useTestInfra } from '@brokkr/testkit';
import {
  eventTypeColumnsSql,
  insertEnvelopesSql,
  insertOutboxRows,
  isoTimestampSql,
  markOutboxPublished,
  outboxInsertSql,
  outboxRow,
  recordPublishAttempt,
  statementEvent,
  statementOutboxRow,
  type OutboxRow,
} from '../src/index.ts';

const logger = createLogger({ service: 'outbox-test', level: 'silent' });
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const COLUMNS = 'id, event_type, subject, payload, headers';

/** What the webhook-dispatcher's intake gets from JetStream for one event. */
interface Consumed {
  subject: string;
  msgId: string | undefined;
  traceparent: string | undefined;
  text: string;
  envelope: EventEnvelope | undefined;
}

/**
 * The envelope's three forms (rows built in JavaScript, one row built by a one-statement write's
 * CTE, rows a statement builds itself), each stored in a real PostgreSQL, read back as the relay
 * reads them, published with the one publisher, and read from BROKKR_EVENTS as the dispatcher's
 * intake does: subject `brokkr.events.<type>`, Nats-Msg-Id the event id, the write's traceparent
 * header, and a body parseEventEnvelope accepts in Brokkr's key order.
 */
describe('@brokkr/outbox envelope', () => {
  const infra = useTestInfra({ nats: true });
  let db: pg.Pool;
  let bus: Bus;

  before(async () => {
    db = new pg.Pool({ connectionString: infra.db.url, max: 2 });
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'outbox-test', logger });
    await ensureStreams(bus.jsm);
  });
  after(async () => {
    await bus?.close();
    await db?.end();
  });

  async function stored(ids: readonly string[]): Promise<OutboxRow[]> {
    const { rows } = await db.query<OutboxRow>(`SELECT ${COLUMNS} FROM outbox WHERE id = ANY($1::uuid[])`, [ids]);
    return ids.map((id) => rows.find((r) => r.id === id)!);
  }

  /** Publishes the rows as read back from the database and returns what the stream holds for each. */
  async function publishAndConsume(rows: readonly OutboxRow[]): Promise<Consumed[]> {
    const { published, firstError } = await publishOutboxRows(bus.js, rows);
    expect(firstError).to.equal(undefined);
    expect(published).to.deep.equal(rows.map((r) => r.id));
    const info = await bus.jsm.streams.info(STREAMS.events);
    const messages: Consumed[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await bus.jsm.streams.getMessage(STREAMS.events, { seq });
      if (!m) continue;
      const text = m.string();
      messages.push({
        subject: m.subject,
        msgId: m.header?.get('Nats-Msg-Id'),
        traceparent: m.header?.get('traceparent') || undefined,
        text,
        envelope: parseEventEnvelope(text),
      });
    }
    return rows.map((r) => messages.find((m) => m.msgId === r.id)!);
  }

  function expectConsumable(row: OutboxRow, message: Consumed, expected: { event: EventEnvelope; traceparent?: string }): void {
    expect(outboxRowSchema.safeParse(row).success, 'the row is an OutboxRow').to.equal(true);
    expect(row).to.deep.include({
      id: expected.event.id,
      event_type: expected.event.event_type,
      subject: `brokkr.events.${expected.event.event_type}`,
      headers: expected.traceparent ? { traceparent: expected.traceparent } : null,
    });
    expect(row.payload).to.deep.equal(expected.event);
    expect(message.subject).to.equal(`brokkr.events.${expected.event.event_type}`);
    expect(message.msgId).to.equal(expected.event.id);
    expect(message.traceparent).to.equal(expected.traceparent);
    expect(message.envelope).to.deep.equal(expected.event);
    // Brokkr's key order, whatever order jsonb gave back.
    expect(Object.keys(JSON.parse(message.text) as object)).to.deep.equal(['id', 'event_type', 'timestamp', 'data']);
  }

  it('multi-row form: rows built in JavaScript (outboxRow + insertOutboxRows)', async () => {
    const traced = buildEvent('stack.created', { stack_id: randomUUID(), name: 'multi-row' });
    const untraced = buildEvent('workorder.created', { work_order_id: randomUUID(), work_type: 'build' });
    await insertOutboxRows(db, [outboxRow(traced, TRACEPARENT), outboxRow(untraced, undefined)]);

    const rows = await stored([traced.id, untraced.id]);
    const [first, second] = await publishAndConsume(rows);
    expectConsumable(rows[0]!, first!, { event: traced, traceparent: TRACEPARENT });
    expectConsumable(rows[1]!, second!, { event: untraced });
  });

  it('single-statement form: one row built by the write’s CTE (statementEvent + outboxInsertSql)', async () => {
    const event = { ...statementEvent('deployment.created'), headers: { traceparent: TRACEPARENT } };
    const { rows: written } = await db.query<{ event_data: Record<string, unknown> }>(
      `WITH src AS (SELECT $1::text AS name, now() AS created_at),
            event AS (${outboxInsertSql({
              event: '$2::jsonb',
              from: 'src',
              data: `jsonb_build_object('name', src.name, 'created_at', ${isoTimestampSql('src.created_at')})`,
            })})
       SELECT event_data FROM event`,
      ['single-statement', JSON.stringify(event)],
    );
    const data = { name: 'single-statement', created_at: written[0]!.event_data.created_at };
    const jsForm = outboxRow({ id: event.id, event_type: event.event_type, timestamp: event.timestamp, data }, TRACEPARENT);

    const [row] = await stored([event.id]);
    // The row the statement stored, and the row the api publishes after commit, are the
    // JavaScript form's row for the same event.
    expect(row).to.deep.equal(jsForm);
    expect(statementOutboxRow(event, written[0]!.event_data, ['name', 'created_at'])).to.deep.equal(jsForm);
    const [message] = await publishAndConsume([row!]);
    expectConsumable(row!, message!, { event: jsForm.payload, traceparent: TRACEPARENT });
    expect(message!.text).to.equal(JSON.stringify(jsForm.payload));
  });

  it('statement-built form: many rows a statement builds itself (eventTypeColumnsSql + insertEnvelopesSql)', async () => {
    const { rows } = await db.query<OutboxRow>(
      `WITH events AS (
         SELECT gen_random_uuid() AS id, ${eventTypeColumnsSql('stack.expired')}, jsonb_build_object('n', g) AS data, g AS ord
           FROM generate_series(1, 2) g
       ), outboxed AS (${insertEnvelopesSql(
         {
           id: 'e.id',
           eventType: 'e.event_type',
           subject: 'e.subject',
           timestamp: isoTimestampSql('now()'),
           data: 'e.data',
           headers: 'NULL',
         },
         { from: 'events e', orderBy: 'e.ord', returning: COLUMNS },
       )})
       SELECT * FROM outboxed`,
    );
    expect(rows).to.have.length(2);
    const consumed = await publishAndConsume(rows);
    rows.forEach((row, i) => {
      const timestamp = row.payload.timestamp;
      expect(new Date(timestamp).toISOString()).to.equal(timestamp);
      const event = { id: row.id, event_type: 'stack.expired', timestamp, data: { n: row.payload.data.n } };
      expectConsumable(row, consumed[i]!, { event });
    });
    expect(rows.map((r) => r.payload.data.n).sort()).to.deep.equal([1, 2]);
  });

  it('formats timestamps exactly as Date.toISOString() prints the value pg parsed (both truncate to ms)', async () => {
    const { rows } = await db.query<{ ts: Date; text: string }>(
      `SELECT ts, ${isoTimestampSql('ts')} AS text
         FROM (SELECT now() - random() * interval '3000 days' AS ts FROM generate_series(1, 20000)) t`,
    );
    const differing = rows.filter((r) => r.ts.toISOString() !== r.text);
    expect(differing.slice(0, 3)).to.deep.equal([]);
  });

  it('stamps published only rows still unpublished; maintenance’s stamp counts its attempts', async () => {
    const [a, b, c] = Array.from({ length: 3 }, () => outboxRow(buildEvent('stack.created', {}), undefined));
    await insertOutboxRows(db, [a!, b!, c!]);
    const state = async () =>
      (
        await db.query<{ id: string; attempts: number; published: boolean }>(
          'SELECT id, attempts, published_at IS NOT NULL AS published FROM outbox WHERE id = ANY($1::uuid[]) ORDER BY id',
          [[a!.id, b!.id, c!.id]],
        )
      ).rows;

    await markOutboxPublished(db, [a!.id]);
    // The api stamped a first; b is acknowledged now, c was tried and stays for the next attempt.
    expect(await recordPublishAttempt(db, [a!.id, b!.id, c!.id], [a!.id, b!.id])).to.equal(2);
    const expected = [
      { id: a!.id, attempts: 0, published: true },
      { id: b!.id, attempts: 1, published: true },
      { id: c!.id, attempts: 1, published: false },
    ].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(await state()).to.deep.equal(expected);
  });
});
