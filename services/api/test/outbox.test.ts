import { expect } from 'chai';
import { connectBus, ensureStreams, type Bus } from '@brokkr/bus';
import { createDb, type Db } from '@brokkr/db';
import { createLogger } from '@brokkr/logger';
import { eventually, serviceBusSettings, useTestInfra } from '@brokkr/testkit';
import { Counter, Registry } from '@brokkr/telemetry';
import { createAuditor } from '../src/audit/auditor.ts';
import { createPublishWindow } from '../src/delivery/publish-window.ts';
import { createOutboxPublisher, type OutboxPublisher } from '../src/events/outbox-publisher.ts';
import { createTransact, type Transact } from '../src/events/transact.ts';
import { collectCore, readStream } from './support/index.ts';
import { testNotifyAgents } from './support/notifier.ts';

const logger = createLogger({ service: 'api-outbox-test', level: 'silent' });
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The write path (outbox + audit) against real Postgres and NATS, without HTTP in between. */
describe('api outbox and audit delivery', () => {
  const infra = useTestInfra({ nats: true });
  let db: Db;
  let bus: Bus;
  let outbox: OutboxPublisher;
  let transact: Transact;

  before(async () => {
    db = createDb({ url: infra.db.url, poolSize: 4 });
    bus = await connectBus({ ...serviceBusSettings(infra.nats, 'api'), name: 'outbox-test', logger });
    await ensureStreams(bus.jsm);
    outbox = createOutboxPublisher({ js: bus.js, db: db.pool, logger, window: createPublishWindow() });
    transact = createTransact({ db, outbox, notifyAgents: testNotifyAgents(bus.nc, logger) });
  });

  after(async () => {
    await bus?.close();
    await db?.close();
  });

  it('commits rows and events together, publishes them with Nats-Msg-Id = event id and stamps published_at', async () => {
    const notified = await collectCore(infra.nats.url, 'brokkr.notify.agent.*');
    let hookRan = false;
    const event = await transact(async (tx) => {
      await tx.client.query("INSERT INTO generators (name) VALUES ('outbox-gen')");
      tx.notifyAgents(['00000000-0000-4000-8000-000000000001']);
      tx.afterCommit(() => {
        hookRan = true;
      });
      return tx.emit('stack.created', { stack_id: '00000000-0000-4000-8000-000000000002', name: 's' });
    });
    expect(hookRan).to.equal(true);
    expect(event.id).to.match(UUID_V4);
    expect(event.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const row = await eventually(async () => {
      const { rows } = await db.query('SELECT * FROM outbox WHERE id = $1 AND published_at IS NOT NULL', [event.id]);
      return rows[0];
    });
    expect(row).to.include({ event_type: 'stack.created', subject: 'brokkr.events.stack.created' });
    expect(row.payload).to.deep.equal(event);
    const messages = await readStream(infra.nats.url, 'BROKKR_EVENTS');
    const message = messages.find((m) => m.msgId === event.id);
    expect(message?.subject).to.equal('brokkr.events.stack.created');
    expect(message?.data).to.deep.equal(event);
    await eventually(() => notified.messages.length === 1, { what: 'agent notification' });
    expect(notified.messages[0]).to.deep.include({ subject: 'brokkr.notify.agent.00000000-0000-4000-8000-000000000001' });
    await notified.close();
  });

  it('inserts, publishes and notifies nothing for a rolled-back transaction', async () => {
    const notified = await collectCore(infra.nats.url, 'brokkr.notify.agent.*');
    let eventId = '';
    let hookRan = false;
    const failed = await transact(async (tx) => {
      eventId = tx.emit('stack.deleted', { stack_id: 'x', deleted_at: new Date().toISOString() }).id;
      tx.notifyAgents(['00000000-0000-4000-8000-000000000003']);
      tx.afterCommit(() => {
        hookRan = true;
      });
      await tx.client.query('INSERT INTO generators (name) VALUES (NULL)');
    }).then(
      () => false,
      () => true,
    );
    expect(failed).to.equal(true);
    await outbox.drain();
    expect((await db.query('SELECT 1 FROM outbox WHERE id = $1', [eventId])).rowCount).to.equal(0);
    expect((await readStream(infra.nats.url, 'BROKKR_EVENTS')).some((m) => m.msgId === eventId)).to.equal(false);
    expect(hookRan).to.equal(false);
    await bus.nc.flush();
    expect(notified.messages).to.have.length(0);
    await notified.close();
  });

  it('publishes audit entries to BROKKR_AUDIT, keyed by the entry id', async () => {
    const audit = createAuditor({ js: bus.js, db: db.pool, logger, fallbackWrites: fallbackCounter() });
    const record = await audit({ actor: 'system', action: 'config.reloaded', resourceType: 'config', details: { changes: [] } });
    const messages = await readStream(infra.nats.url, 'BROKKR_AUDIT');
    const message = messages.find((m) => m.msgId === record.id);
    expect(message?.subject).to.equal('brokkr.audit.config.reloaded');
    expect(message?.data).to.deep.equal(record);
    expect((await db.query('SELECT 1 FROM audit_logs WHERE id = $1', [record.id])).rowCount).to.equal(0);
  });

  describe('when NATS is down', () => {
    // A nats-server of this block's own, stopped once the bus is connected (the outer one stays up).
    const down = useTestInfra({ db: false, nats: true });
    let downBus: Bus;

    before(async () => {
      downBus = await connectBus({ ...serviceBusSettings(down.nats, 'api'), name: 'outbox-test-down', logger, drainTimeoutMs: 500 });
      await ensureStreams(downBus.jsm);
      await down.nats.stop();
    });

    after(async () => {
      await downBus?.close();
    });

    it('keeps committed events in the outbox for the relay and still succeeds', async () => {
      const downOutbox = createOutboxPublisher({ js: downBus.js, db: db.pool, logger, window: createPublishWindow() });
      const downTransact = createTransact({
        db,
        outbox: downOutbox,
        notifyAgents: testNotifyAgents(downBus.nc, logger),
      });
      const event = await downTransact(async (tx) => {
        tx.notifyAgents(['00000000-0000-4000-8000-000000000004']);
        return tx.emit('deployment.created', { deployment_object_id: 'd', stack_id: 's', sequence_id: 1, created_at: 'now' });
      });
      await downOutbox.drain();
      const { rows } = await db.query('SELECT published_at FROM outbox WHERE id = $1', [event.id]);
      expect(rows).to.have.length(1);
      expect(rows[0]!.published_at).to.equal(null);
    });

    it('writes audit entries straight to audit_logs', async () => {
      const fallback = fallbackCounter();
      const audit = createAuditor({ js: downBus.js, db: db.pool, logger, fallbackWrites: fallback });
      const record = await audit({
        actor: 'system',
        action: 'auth.failed',
        resourceType: 'system',
        details: { reason: 'invalid_pak', path: '/x' },
        ipAddress: '192.0.2.1',
      });
      const { rows } = await db.query('SELECT actor_type, action, details, ip_address, user_agent FROM audit_logs WHERE id = $1', [
        record.id,
      ]);
      expect(rows[0]).to.deep.equal({
        actor_type: 'system',
        action: 'auth.failed',
        details: { reason: 'invalid_pak', path: '/x' },
        ip_address: '192.0.2.1',
        user_agent: null,
      });
      expect((await fallback.get()).values[0]?.value).to.equal(1);
    });
  });
});

function fallbackCounter(): Counter<'reason'> {
  return new Counter({ name: 'fallback_total', help: 'test', labelNames: ['reason'], registers: [new Registry()] });
}
