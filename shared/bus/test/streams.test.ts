import { expect } from 'chai';
import { nanos } from '@nats-io/transport-node';
import { createLogger } from '@brokkr/logger';
import { testOnlyBusSettings, useTestInfra } from '@brokkr/testkit';
import { connectBus, ensureStreams, publishJson, STREAMS, SUBJECTS, type Bus } from '@brokkr/bus';

const logger = createLogger({ service: 'bus-test', level: 'silent' });

describe('@brokkr/bus streams', () => {
  const infra = useTestInfra({ db: false, nats: true });
  let bus: Bus;

  before(async () => {
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'bus-streams-test', logger });
  });

  after(async () => {
    await bus?.close();
  });

  it('provisions both streams idempotently with an explicit duplicate window', async () => {
    const first = await ensureStreams(bus.jsm);
    const second = await ensureStreams(bus.jsm);
    expect(second.map((s) => s.config)).to.deep.equal(first.map((s) => s.config));
    const events = await bus.jsm.streams.info(STREAMS.events);
    expect(events.config.subjects).to.deep.equal(['brokkr.events.>']);
    expect(events.config.duplicate_window).to.equal(nanos(2 * 60 * 1000));
    expect(events.config.storage).to.equal('file');
    expect(events.config.discard).to.equal('old');
    expect(events.config.max_age).to.equal(nanos(7 * 24 * 60 * 60 * 1000));
    expect(events.config.max_bytes).to.be.greaterThan(0);
    expect(events.config.max_msg_size).to.be.greaterThan(0);
    const audit = await bus.jsm.streams.info(STREAMS.audit);
    expect(audit.config.subjects).to.deep.equal(['brokkr.audit.>']);
    expect(audit.config.duplicate_window).to.equal(nanos(2 * 60 * 1000));
  });

  it('brings a stream whose limits drifted back in line', async () => {
    await ensureStreams(bus.jsm);
    await bus.jsm.streams.update(STREAMS.audit, { max_age: nanos(60 * 60 * 1000) });
    await ensureStreams(bus.jsm);
    const audit = await bus.jsm.streams.info(STREAMS.audit);
    expect(audit.config.max_age).to.equal(nanos(7 * 24 * 60 * 60 * 1000));
  });

  it('stores a message published twice with the same msgID once', async () => {
    await ensureStreams(bus.jsm);
    await bus.jsm.streams.purge(STREAMS.events);
    const subject = SUBJECTS.event('deployment.created');
    const first = await publishJson(bus.js, subject, { id: 'e-1' }, { msgID: 'e-1' });
    const second = await publishJson(bus.js, subject, { id: 'e-1' }, { msgID: 'e-1' });
    expect(first.duplicate).to.equal(false);
    expect(second.duplicate).to.equal(true);
    expect(second.seq).to.equal(first.seq);
    const info = await bus.jsm.streams.info(STREAMS.events);
    expect(info.state.messages).to.equal(1);
  });

  it('close() can be called more than once', async () => {
    const extra = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'bus-close-test', logger });
    await Promise.all([extra.close(), extra.close()]);
    await extra.close();
    expect(extra.nc.isClosed()).to.equal(true);
  });

  it('reports an unreachable server as a DependencyError without credentials', async () => {
    const err = await connectBus({ url: 'nats://user:hunter2@127.0.0.1:1', name: 'nope', logger }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.name).to.equal('DependencyError');
    expect(err?.message).to.not.contain('hunter2');
  });
});

describe('@brokkr/bus subjects', () => {
  it('builds the documented subject names', () => {
    expect(SUBJECTS.event('deployment.created')).to.equal('brokkr.events.deployment.created');
    expect(SUBJECTS.audit('agent.created')).to.equal('brokkr.audit.agent.created');
    expect(SUBJECTS.notifyAgent('0b8f1f3e-6c1a-4a61-9a3a-9d7c5a3c2f10')).to.equal(
      'brokkr.notify.agent.0b8f1f3e-6c1a-4a61-9a3a-9d7c5a3c2f10',
    );
    expect(SUBJECTS.notifyDeliveries).to.equal('brokkr.notify.deliveries');
    expect(SUBJECTS.cacheInvalidate('pak')).to.equal('brokkr.cache.invalidate.pak');
    expect(SUBJECTS.configReload).to.equal('brokkr.config.reload');
  });

  it('refuses tokens that would change the subject structure', () => {
    expect(() => SUBJECTS.notifyAgent('a.b')).to.throw(/agent id/);
    expect(() => SUBJECTS.cacheInvalidate('*')).to.throw(/cache kind/);
    expect(() => SUBJECTS.event('deployment.>')).to.throw(/event type/);
    expect(() => SUBJECTS.event('deployment..created')).to.throw(/event type/);
  });
});
