import { expect } from 'chai';
import pg from 'pg';
import { useTestInfra } from '@brokkr/testkit';
import {
  INTERRUPTED_AGENT_SILENT,
  INTERRUPTED_LEASE_EXPIRED,
  afterFailure,
  claimForAgent,
  deleteFinishedDeliveries,
  isRetryableReport,
  recordAgentFailure,
  recordAgentSuccess,
  recordAgentUndeliverable,
  redeliver,
  releaseExpiredLeases,
  requeueDueRetries,
  type AgentClaimedDelivery,
} from '../src/index.ts';
import { createDelivery, expireLease, insertAgent, insertSubscription, makeRetryDue, row } from './support/fixtures.ts';

const policy = { maxBackoffSeconds: 3600, random: () => 0.5 };

/** Agents (through the api), maintenance and admins, against a real PostgreSQL. */
describe('@brokkr/webhook-deliveries: agent, maintenance and admin transitions', () => {
  const infra = useTestInfra();
  let db: pg.Pool;

  before(() => {
    db = new pg.Pool({ connectionString: infra.db.url, max: 4 });
  });
  after(async () => {
    await db?.end();
  });
  afterEach(async () => {
    await db.query('DELETE FROM webhook_subscriptions');
  });

  const claimOf = (agentId: string, c: AgentClaimedDelivery) => ({ id: c.id, agentId, attempts: c.attempts });

  it('hands a row only to an agent carrying all its labels, leased for 60 s + timeout + 30 s', async () => {
    const sub = await insertSubscription(db, { targetLabels: ['edge', 'gpu'], timeoutSeconds: 30 });
    const hubSub = await insertSubscription(db);
    const id = await createDelivery(db, sub);
    await createDelivery(db, hubSub);
    const partial = await insertAgent(db, ['edge']);
    const full = await insertAgent(db, ['edge', 'gpu', 'extra']);
    expect(await claimForAgent(db, partial, 10)).to.deep.equal([]);
    const [claimed, ...rest] = await claimForAgent(db, full, 10);
    expect(rest).to.deep.equal([]);
    expect(claimed).to.include({ id, status: 'acquired', attempts: 0 });
    const stored = await row(db, id);
    expect(stored.acquired_by).to.equal(full);
    expect(stored.lease_left).to.be.within(118, 120);
  });

  it('records an agent’s failure with the one retry policy, then success; a stale claim writes nothing', async () => {
    const sub = await insertSubscription(db, { targetLabels: ['edge'], maxRetries: 5 });
    const id = await createDelivery(db, sub);
    const agent = await insertAgent(db, ['edge']);
    const [first] = await claimForAgent(db, agent, 10);
    const next = afterFailure({ retryable: isRetryableReport(503), attemptsBefore: first!.attempts, maxRetries: 5 }, policy);
    expect(next).to.deep.equal({ kind: 'retry', delaySeconds: 2 });
    const failed = await recordAgentFailure(db, claimOf(agent, first!), { ...next, error: 'HTTP 503: busy' });
    expect(failed).to.include({ status: 'failed', attempts: 1 });
    const stored = await row(db, id);
    expect(stored).to.include({ acquired_by: null, last_error: 'HTTP 503: busy' });
    expect(stored.retry_in).to.be.within(1, 2);
    // The old claim (attempts 0) is spent: its repeated report lands nowhere.
    expect(await recordAgentSuccess(db, claimOf(agent, first!))).to.equal(undefined);

    await makeRetryDue(db, id);
    const [second] = await claimForAgent(db, agent, 10);
    expect(second).to.include({ id, attempts: 1 });
    expect(await recordAgentSuccess(db, claimOf(agent, second!))).to.include({ status: 'success', attempts: 2 });
    expect((await row(db, id)).acquired_by).to.equal(agent);
  });

  it('a final failure or an undeliverable row is dead and keeps its agent (a repeated report finds it)', async () => {
    const sub = await insertSubscription(db, { targetLabels: ['edge'] });
    const [gone, broken] = [await createDelivery(db, sub), await createDelivery(db, sub)];
    const agent = await insertAgent(db, ['edge']);
    const claims = await claimForAgent(db, agent, 10);
    const claim = (id: string) =>
      claimOf(
        agent,
        claims.find((c) => c.id === id)!,
      );
    const next = afterFailure({ retryable: isRetryableReport(404), attemptsBefore: 0, maxRetries: 5 }, policy);
    expect(await recordAgentFailure(db, claim(gone), { ...next, error: 'HTTP 404' })).to.include({
      status: 'dead',
      attempts: 1,
      next_retry_at: null,
    });
    expect(await recordAgentUndeliverable(db, claim(broken), 'Failed to decrypt URL')).to.include({ status: 'dead', attempts: 1 });
    for (const id of [gone, broken]) expect(await row(db, id)).to.include({ status: 'dead', acquired_by: agent });
  });

  it('takes back a silent agent’s expired lease counting the attempt, and settles it dead once the budget is spent', async () => {
    const sub = await insertSubscription(db, { targetLabels: ['edge'], maxRetries: 2 });
    const id = await createDelivery(db, sub);
    const [silent, taker] = [await insertAgent(db, ['edge']), await insertAgent(db, ['edge'])];
    const [first] = await claimForAgent(db, silent, 10);
    await expireLease(db, id);
    const [second] = await claimForAgent(db, taker, 10);
    expect(second).to.include({ id, status: 'acquired', attempts: 1, last_error: INTERRUPTED_AGENT_SILENT });
    expect(await recordAgentSuccess(db, claimOf(silent, first!))).to.equal(undefined);
    await expireLease(db, id);
    const [third] = await claimForAgent(db, silent, 10);
    expect(third).to.include({ id, status: 'dead', attempts: 2 });
    expect(await row(db, id)).to.include({ status: 'dead', acquired_by: taker, acquired_until: null });
  });

  it('maintenance: releases expired leases (attempt counted), requeues due retries, deletes old finished rows', async () => {
    const sub = await insertSubscription(db, { targetLabels: ['edge'] });
    const agent = await insertAgent(db, ['edge']);
    const [leased, retrying, finished] = [await createDelivery(db, sub), await createDelivery(db, sub), await createDelivery(db, sub)];
    const claims = await claimForAgent(db, agent, 10);
    const claim = (id: string) =>
      claimOf(
        agent,
        claims.find((c) => c.id === id)!,
      );
    await recordAgentFailure(db, claim(retrying), { kind: 'retry', delaySeconds: 600, error: 'HTTP 500' });
    await recordAgentSuccess(db, claim(finished));
    await expireLease(db, leased);
    expect(await releaseExpiredLeases(db, 100)).to.equal(1);
    expect(await row(db, leased)).to.include({ status: 'pending', attempts: 1, acquired_by: null, last_error: INTERRUPTED_LEASE_EXPIRED });
    expect(await requeueDueRetries(db, 100)).to.equal(0);
    await makeRetryDue(db, retrying);
    expect(await requeueDueRetries(db, 100)).to.equal(1);
    expect(await row(db, retrying)).to.include({ status: 'pending', next_retry_at: null });
    expect(await deleteFinishedDeliveries(db, 7, 100)).to.equal(0);
    await db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '8 days'`);
    expect(await deleteFinishedDeliveries(db, 7, 100)).to.equal(1);
    expect(await row(db, finished)).to.equal(undefined);
  });

  it('admin: redelivers only a finished delivery, with a fresh budget', async () => {
    const sub = await insertSubscription(db, { targetLabels: ['edge'] });
    const agent = await insertAgent(db, ['edge']);
    const id = await createDelivery(db, sub);
    expect(await redeliver(db, id)).to.equal(undefined);
    const [claimed] = await claimForAgent(db, agent, 10);
    await recordAgentUndeliverable(db, claimOf(agent, claimed!), 'Failed to decrypt URL');
    expect(await redeliver(db, id)).to.include({ id, status: 'pending', attempts: 0, acquired_by: null, completed_at: null });
    expect(await redeliver(db, id)).to.equal(undefined);
  });
});
