import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { publishJson, STREAMS } from '@brokkr/bus';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { outboxRelayTask, type Maintenance } from '../src/index.ts';
import { createReplica, manual, type Replica } from './support.ts';

function event(type = 'stack.created') {
  return { id: randomUUID(), event_type: type, timestamp: new Date().toISOString(), data: { stack_id: randomUUID(), name: 'demo' } };
}

describe('outbox relay', () => {
  const infra = useTestInfra({ nats: true });
  let replica: Replica;
  let maintenance: Maintenance;
  let jsm: JetStreamManager;

  before(async () => {
    replica = await createReplica(infra.db.url, infra.nats.url);
    maintenance = await manual(replica, { BROKKR__MAINTENANCE__OUTBOX_RELAY_AFTER_SECONDS: '5', BROKKR__MAINTENANCE__BATCH_SIZE: '7' });
    jsm = await jetstreamManager(replica.bus.nc);
  });
  after(async () => {
    await maintenance?.stop();
    await replica?.close();
  });

  /** Rows committed by an api that then crashed before publishing: `age` old, unpublished. */
  async function insertUnpublished(count: number, age = '1 minute') {
    const events = Array.from({ length: count }, () => event());
    for (const e of events) {
      await replica.db.query(
        `INSERT INTO outbox (id, event_type, subject, payload, headers, created_at)
         VALUES ($1, $2, $3, $4, $5, now() - $6::interval)`,
        [
          e.id,
          e.event_type,
          `brokkr.events.${e.event_type}`,
          JSON.stringify(e),
          JSON.stringify({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
          age,
        ],
      );
    }
    return events;
  }
  const streamCount = async () => (await jsm.streams.info(STREAMS.events)).state.messages;
  const unpublished = async () =>
    (await replica.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL')).rows[0]!.n;

  it('publishes leftover rows once, with Nats-Msg-Id, traceparent and Brokkr envelope order', async () => {
    const before = await streamCount();
    const events = await insertUnpublished(20);
    const young = await insertUnpublished(1, '0 seconds');

    const tick = await maintenance.tick(outboxRelayTask);
    expect(tick).to.deep.equal({ outcome: 'ok', rows: 20 });
    expect(await streamCount()).to.equal(before + 20);
    expect(await unpublished()).to.equal(1, 'a row younger than the relay delay is left to the api');
    await replica.db.query('DELETE FROM outbox WHERE id = $1', [young[0]!.id]);

    const first = events[0]!;
    const stored = await jsm.streams.getMessage(STREAMS.events, { last_by_subj: 'brokkr.events.stack.created' });
    expect(stored?.subject).to.equal('brokkr.events.stack.created');
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => jsm.streams.getMessage(STREAMS.events, { seq: before + 1 + i })));
    const byId = new Map(all.map((m) => [m!.header.get('Nats-Msg-Id'), m!]));
    const message = byId.get(first.id)!;
    // jsonb may reorder keys inside `data`; the envelope keeps Brokkr's order.
    expect(message.json()).to.deep.equal(first);
    expect(Object.keys(message.json<object>())).to.deep.equal(['id', 'event_type', 'timestamp', 'data']);
    expect(message.header.get('traceparent')).to.equal('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(new Set(byId.keys())).to.deep.equal(new Set(events.map((e) => e.id)));
  });

  it('stores an event once even when it is relayed twice or the api published it too', async () => {
    const before = await streamCount();
    const events = await insertUnpublished(5);
    // The api published two of them but crashed before stamping published_at.
    for (const e of events.slice(0, 2)) await publishJson(replica.bus.js, `brokkr.events.${e.event_type}`, e, { msgID: e.id });
    expect(await streamCount()).to.equal(before + 2);

    expect((await maintenance.tick(outboxRelayTask)).rows).to.equal(5);
    // Relayed a second time (e.g. the stamp was lost): the stream deduplicates on the id.
    await replica.db.query('UPDATE outbox SET published_at = NULL WHERE id = ANY($1::uuid[])', [events.map((e) => e.id)]);
    expect((await maintenance.tick(outboxRelayTask)).rows).to.equal(5);
    expect(await streamCount()).to.equal(before + 5);
    const { rows } = await replica.db.query<{ attempts: number }>('SELECT attempts FROM outbox WHERE id = ANY($1::uuid[])', [
      events.map((e) => e.id),
    ]);
    expect(rows.map((r) => r.attempts)).to.deep.equal([2, 2, 2, 2, 2]);
    // Nothing left: a third tick is a no-op.
    expect(await maintenance.tick(outboxRelayTask)).to.deep.equal({ outcome: 'ok', rows: 0 });
  });

  it('fills the gap once NATS is back after a restart', async () => {
    const before = await streamCount();
    const early = await insertUnpublished(3);
    await infra.nats.stop();
    const during = await insertUnpublished(4);

    const down = await maintenance.tick(outboxRelayTask);
    expect(down.rows).to.equal(0);
    expect(await unpublished()).to.equal(7);

    await infra.restartNats();
    await eventually(
      async () => {
        await maintenance.tick(outboxRelayTask);
        return (await unpublished()) === 0;
      },
      { timeoutMs: 45_000, intervalMs: 250, what: 'the relay to publish after NATS came back' },
    );
    // The test reads through a connection of its own (not maintenance's): wait until it is back too
    // (a flush on a connection still reconnecting fails with "connection disconnected": try again).
    const count = await eventually(
      async () => {
        await replica.bus.nc.flush();
        return { messages: await streamCount() };
      },
      { timeoutMs: 45_000, intervalMs: 250, what: 'the test’s own NATS connection to be back' },
    );
    expect(count.messages).to.equal(before + 7);
    const ids = new Set<string>();
    for (let seq = before + 1; seq <= before + 7; seq++) {
      ids.add((await jsm.streams.getMessage(STREAMS.events, { seq }))!.header.get('Nats-Msg-Id'));
    }
    expect(ids).to.deep.equal(new Set([...early, ...during].map((e) => e.id)));
  });
});
