import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { useTestInfra } from '@brokkr/testkit';
import {
  INTERRUPTED_BY_SHUTDOWN,
  INTERRUPTED_LEASE_EXPIRED,
  claimForDispatcher,
  decide,
  insertDeliveries,
  recordDead,
  recordRetry,
  recordSuccess,
  releaseClaims,
  type ClaimedDelivery,
} from '../src/index.ts';
import { createDelivery, expireLease, insertSubscription, makeRetryDue, row } from './support/fixtures.ts';

const FLOOR = 60;
const claimOptions = { limit: 50, leaseFloorSeconds: FLOOR, roomBySubscription: new Map<string, number>(), defaultRoom: 50 };

/** The dispatcher's transitions against a real PostgreSQL: create, claim, reclaim, record, release. */
describe('@brokkr/webhook-deliveries: dispatcher transitions', () => {
  const infra = useTestInfra();
  let db: pg.Pool;

  before(() => {
    db = new pg.Pool({ connectionString: infra.db.url, max: 6 });
  });
  after(async () => {
    await db?.end();
  });
  afterEach(async () => {
    await db.query('DELETE FROM webhook_subscriptions');
  });

  async function claimOne(id: string): Promise<ClaimedDelivery> {
    const claimed = (await claimForDispatcher(db, claimOptions)).filter((c) => c.id === id);
    expect(claimed, `claim of ${id}`).to.have.length(1);
    return claimed[0]!;
  }

  it('creates one delivery per event × subscription, whatever the replays; none for a disabled subscription', async () => {
    const hub = await insertSubscription(db);
    const agents = await insertSubscription(db, { targetLabels: ['edge'] });
    const off = await insertSubscription(db, { enabled: false });
    const eventId = randomUUID();
    const rows = [hub, agents, off].map((subscriptionId) => ({ subscriptionId, eventId, eventType: 'stack.created', payload: '{}' }));
    expect(await insertDeliveries(db, rows)).to.deep.equal({ inserted: 2, forHub: 1 });
    expect(await insertDeliveries(db, rows)).to.deep.equal({ inserted: 0, forHub: 0 });
    const { rows: stored } = await db.query(
      'SELECT status, target_labels FROM webhook_deliveries WHERE event_id = $1 ORDER BY target_labels NULLS FIRST',
      [eventId],
    );
    expect(stored).to.deep.equal([
      { status: 'pending', target_labels: null },
      { status: 'pending', target_labels: ['edge'] },
    ]);
  });

  it('claims hub rows only, with a lease of max(floor, timeout + 10 s); concurrent claims never share a row', async () => {
    const quick = await insertSubscription(db, { timeoutSeconds: 5 });
    const slow = await insertSubscription(db, { timeoutSeconds: 120 });
    const agentSub = await insertSubscription(db, { targetLabels: ['edge'] });
    const agentRow = await createDelivery(db, agentSub);
    const ids = await Promise.all([...Array(20).keys()].map((i) => createDelivery(db, i % 2 ? quick : slow)));
    const claims = await Promise.all([0, 1, 2, 3].map(() => claimForDispatcher(db, { ...claimOptions, limit: 10 })));
    // A claim may skip rows a concurrent one holds locked for a moment: they wait for the next claim.
    for (let more = await claimForDispatcher(db, claimOptions); more.length > 0; more = await claimForDispatcher(db, claimOptions))
      claims.push(more);
    const claimed = claims.flat().map((c) => c.id);
    expect(new Set(claimed).size).to.equal(claimed.length, 'a row was claimed twice');
    expect([...claimed].sort()).to.deep.equal([...ids].sort());
    expect((await row(db, agentRow)).status).to.equal('pending');
    const quickRow = await row(db, claims.flat().find((c) => c.subscription_id === quick)!.id);
    const slowRow = await row(db, claims.flat().find((c) => c.subscription_id === slow)!.id);
    expect(quickRow).to.include({ status: 'acquired', acquired_by: null, attempts: 0 });
    expect(quickRow.lease_left).to.be.within(FLOOR - 2, FLOOR);
    expect(slowRow.lease_left).to.be.within(130 - 2, 130);
  });

  it('records success, a retry after the policy’s backoff, and dead, each fenced on the lease', async () => {
    const sub = await insertSubscription(db);
    const [ok, retry, dead] = [await createDelivery(db, sub), await createDelivery(db, sub), await createDelivery(db, sub)];
    const claims = await claimForDispatcher(db, claimOptions);
    const claim = (id: string) => claims.find((c) => c.id === id)!;

    expect(await recordSuccess(db, claim(ok))).to.equal(true);
    expect(await row(db, ok)).to.include({ status: 'success', attempts: 1, last_error: null, acquired_until: null });

    const decision = decide({ kind: 'response', status: 503, bodyPrefix: 'busy' }, 0, 5, { maxBackoffSeconds: 3600, random: () => 0.5 });
    expect(decision).to.deep.equal({ kind: 'retry', delaySeconds: 2, error: 'HTTP 503 Service Unavailable: busy' });
    if (decision.kind !== 'retry') throw new Error('unreachable');
    expect(await recordRetry(db, claim(retry), decision)).to.equal(true);
    const failed = await row(db, retry);
    expect(failed).to.include({ status: 'failed', attempts: 1, last_error: 'HTTP 503 Service Unavailable: busy', acquired_until: null });
    expect(failed.retry_in).to.be.within(1, 2);
    // Not due yet: nothing to claim; due: claimed again.
    expect(await claimForDispatcher(db, claimOptions)).to.deep.equal([]);
    await makeRetryDue(db, retry);
    expect((await claimOne(retry)).attempts).to.equal(1);

    expect(await recordDead(db, claim(dead), 'HTTP 404 Not Found: ')).to.equal(true);
    expect(await row(db, dead)).to.include({ status: 'dead', attempts: 1, last_error: 'HTTP 404 Not Found: ' });
    // A second write with the same (now spent) lease lands nowhere.
    expect(await recordSuccess(db, claim(dead))).to.equal(false);
    expect((await row(db, dead)).status).to.equal('dead');
  });

  it('takes back an expired lease counting the interrupted attempt; the old holder can no longer write', async () => {
    const sub = await insertSubscription(db, { maxRetries: 5 });
    const id = await createDelivery(db, sub);
    const first = await claimOne(id);
    await expireLease(db, id);
    const second = await claimOne(id);
    expect(second).to.include({ status: 'acquired', attempts: 1, last_error: INTERRUPTED_LEASE_EXPIRED });
    expect(second.lease).to.not.equal(first.lease);
    expect(await recordSuccess(db, first)).to.equal(false);
    expect(await recordSuccess(db, second)).to.equal(true);
    expect(await row(db, id)).to.include({ status: 'success', attempts: 2 });
  });

  it('settles a reclaimed row dead at claim time when the interrupted attempt used up max_retries', async () => {
    const sub = await insertSubscription(db, { maxRetries: 2 });
    const id = await createDelivery(db, sub);
    await db.query(`UPDATE webhook_deliveries SET attempts = 1 WHERE id = $1`, [id]);
    await claimOne(id);
    await expireLease(db, id);
    const settled = await claimOne(id);
    expect(settled).to.include({ status: 'dead', attempts: 2, last_error: INTERRUPTED_LEASE_EXPIRED });
    const stored = await row(db, id);
    expect(stored).to.include({ status: 'dead', attempts: 2, acquired_until: null });
    expect(stored.completed_at).to.be.an.instanceOf(Date);
    expect(await claimForDispatcher(db, claimOptions)).to.deep.equal([]);
  });

  it('pauses the rows of a disabled subscription and resumes them when it is enabled again', async () => {
    const sub = await insertSubscription(db);
    const id = await createDelivery(db, sub);
    await db.query('UPDATE webhook_subscriptions SET enabled = false WHERE id = $1', [sub]);
    expect(await claimForDispatcher(db, claimOptions)).to.deep.equal([]);
    await db.query('UPDATE webhook_subscriptions SET enabled = true WHERE id = $1', [sub]);
    expect((await claimOne(id)).status).to.equal('acquired');
  });

  it('hands claims back: untouched when never sent, with the attempt counted when cut short', async () => {
    const sub = await insertSubscription(db);
    const [unsent, cut] = [await createDelivery(db, sub), await createDelivery(db, sub)];
    const claims = await claimForDispatcher(db, claimOptions);
    expect(
      await releaseClaims(
        db,
        claims.filter((c) => c.id === unsent),
      ),
    ).to.equal(1);
    expect(
      await releaseClaims(
        db,
        claims.filter((c) => c.id === cut),
        { attempted: true },
      ),
    ).to.equal(1);
    expect(await row(db, unsent)).to.include({ status: 'pending', attempts: 0, last_error: null, acquired_until: null });
    expect(await row(db, cut)).to.include({ status: 'pending', attempts: 1, last_error: INTERRUPTED_BY_SHUTDOWN });
    // Released once; the spent lease cannot release (or record) again.
    expect(await releaseClaims(db, claims)).to.equal(0);
  });
});
