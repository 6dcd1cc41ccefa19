import { expect } from 'chai';
import { connectBus, ensureStreams, type Bus } from '@brokkr/bus';
import { createDb, type Db } from '@brokkr/db';
import { createLogger } from '@brokkr/logger';
import { isoTimestampSql, outboxInsertSql, statementEvent, statementOutboxRow } from '@brokkr/outbox';
import { eventually, serviceBusSettings, useTestInfra } from '@brokkr/testkit';
import { createPublishWindow } from '../src/delivery/publish-window.ts';
import { createOutboxPublisher, type OutboxPublisher } from '../src/events/outbox-publisher.ts';
import { writeOnce, type WriteOnceDeps } from '../src/events/write-once.ts';
import { collectCore, readStream } from './support/index.ts';
import { testNotifyAgents } from './support/notifier.ts';

const logger = createLogger({ service: 'api-statement-event-test', level: 'silent' });
const KEYS = ['generator_id', 'name', 'created_at'] as const;

/** A write that is one statement: the generator row and its outbox row in one CTE. */
const insertGenerator = `
  WITH ins AS (INSERT INTO generators (name) VALUES ($1) RETURNING id, name, created_at),
  event AS (${outboxInsertSql({
    event: '$2::jsonb',
    from: 'ins',
    data: `jsonb_build_object('generator_id', ins.id, 'name', ins.name, 'created_at', ${isoTimestampSql('ins.created_at')})`,
  })})
  SELECT ins.id, ins.created_at, event.event_data FROM ins, event`;

/** writeOnce and outbox rows built by the write's own statement, against real Postgres and NATS. */
describe('api one-statement writes (writeOnce, outboxInsertSql)', () => {
  const infra = useTestInfra({ nats: true });
  let db: Db;
  let bus: Bus;
  let outbox: OutboxPublisher;
  let deps: WriteOnceDeps;

  before(async () => {
    db = createDb({ url: infra.db.url, poolSize: 4 });
    bus = await connectBus({ ...serviceBusSettings(infra.nats, 'api'), name: 'statement-event-test', logger });
    await ensureStreams(bus.jsm);
    outbox = createOutboxPublisher({ js: bus.js, db: db.pool, logger, window: createPublishWindow() });
    deps = { db, outbox, notifyAgents: testNotifyAgents(bus.nc, logger) };
  });

  after(async () => {
    await outbox?.drain();
    await bus?.close();
    await db?.close();
  });

  it('commits the row and its outbox row together, publishes the stored envelope in key order and wakes the agents', async () => {
    const notified = await collectCore(infra.nats.url, 'brokkr.notify.agent.*');
    const event = statementEvent('stack.created');
    const created = await writeOnce(deps, async (w) => {
      const { rows } = await w.db.query<{ id: string; created_at: Date; event_data: Record<string, unknown> }>(insertGenerator, [
        'one-statement',
        JSON.stringify(event),
      ]);
      w.inserted(statementOutboxRow(event, rows[0]!.event_data, KEYS));
      w.notifyAgents(['00000000-0000-4000-8000-000000000011']);
      return rows[0]!;
    });
    const expected = {
      id: event.id,
      event_type: 'stack.created',
      timestamp: event.timestamp,
      data: { generator_id: created.id, name: 'one-statement', created_at: created.created_at.toISOString() },
    };
    const stored = await eventually(async () => {
      const { rows } = await db.query('SELECT * FROM outbox WHERE id = $1 AND published_at IS NOT NULL', [event.id]);
      return rows[0];
    });
    expect(stored).to.include({ event_type: 'stack.created', subject: 'brokkr.events.stack.created', headers: null });
    expect(stored.payload).to.deep.equal(expected);
    const message = (await readStream(infra.nats.url, 'BROKKR_EVENTS')).find((m) => m.msgId === event.id);
    // Same values and the same key order: the same bytes as an event built in JavaScript.
    expect(JSON.stringify(message?.data)).to.equal(JSON.stringify(expected));
    await eventually(() => notified.messages.length === 1, { what: 'agent notification' });
    await notified.close();
  });

  it('leaves neither row when the statement fails, publishes and wakes nothing', async () => {
    const notified = await collectCore(infra.nats.url, 'brokkr.notify.agent.*');
    const event = statementEvent('stack.created');
    const failed = await writeOnce(deps, async (w) => {
      w.notifyAgents(['00000000-0000-4000-8000-000000000012']);
      await w.db.query(insertGenerator, [null, JSON.stringify(event)]);
    }).then(
      () => false,
      () => true,
    );
    expect(failed).to.equal(true);
    await outbox.drain();
    expect((await db.query('SELECT 1 FROM outbox WHERE id = $1', [event.id])).rowCount).to.equal(0);
    await bus.nc.flush();
    expect(notified.messages).to.have.length(0);
    await notified.close();
  });

  it('refuses a second statement (it would not be atomic with the first)', async () => {
    const refused = await writeOnce(deps, async (w) => {
      await w.db.query('SELECT 1');
      await w.db.query('SELECT 2');
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(refused)).to.contain('writeOnce runs one statement');
  });
});
