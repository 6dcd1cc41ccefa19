import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { connectBus, ensureStreams, STREAMS, type Bus } from '@brokkr/bus';
import type { AuditRecord } from '@brokkr/contracts';
import { createDb, type Db } from '@brokkr/db';
import { createLogger } from '@brokkr/logger';
import { testOnlyBusSettings, useTestInfra } from '@brokkr/testkit';
import { createAuditPublisher, insertAuditRecords } from '../src/index.ts';

const logger = createLogger({ service: 'audit-test', level: 'silent' });

function record(action = 'stack.created'): AuditRecord {
  return {
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    actor_type: 'admin',
    actor_id: null,
    action,
    resource_type: 'stack',
    resource_id: randomUUID(),
    details: { name: 'x' },
    ip_address: null,
    user_agent: null,
  };
}

async function rowsWithId(db: Db, id: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_logs WHERE id = $1', [id]);
  return rows[0]?.n ?? 0;
}

/** Publish, else insert — against a real nats-server with JetStream and a real PostgreSQL. */
describe('@brokkr/audit', () => {
  const infra = useTestInfra({ nats: true });
  let db: Db;
  let bus: Bus;

  before(async () => {
    db = createDb({ url: infra.db.url });
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'audit-test', logger });
    await ensureStreams(bus.jsm);
  });
  after(async () => {
    await bus?.close().catch(() => undefined);
    await db?.close();
  });

  it('publishes to BROKKR_AUDIT with the entry id as Nats-Msg-Id, and writes nothing itself', async () => {
    const entry = record();
    await createAuditPublisher({ js: bus.js, db: db.pool, logger })(entry);
    const stored = await bus.jsm.streams.getMessage(STREAMS.audit, { last_by_subj: 'brokkr.audit.stack.created' });
    expect(stored?.json<AuditRecord>().id).to.equal(entry.id);
    expect(stored?.header.get('Nats-Msg-Id')).to.equal(entry.id);
    expect(await rowsWithId(db, entry.id)).to.equal(0);
  });

  it('inserts the entry directly when NATS does not take it, and a second copy changes nothing', async () => {
    const entry = record('pak.rotated');
    let fallbacks = 0;
    const down = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'audit-test-closed', logger });
    await down.close();
    await createAuditPublisher({ js: down.js, db: db.pool, logger, onFallback: () => fallbacks++ })(entry);
    expect(fallbacks).to.equal(1);
    expect(await rowsWithId(db, entry.id)).to.equal(1);
    // The same entry arriving again (e.g. through the stream after all) is absorbed.
    expect(await insertAuditRecords(db.pool, [entry])).to.equal(0);
    expect(await rowsWithId(db, entry.id)).to.equal(1);
  });
});
