import { expect } from 'chai';
import type { Msg } from '@brokkr/bus';
import { createMetricsRegistry } from '@brokkr/telemetry';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  agentEventsRetentionTask,
  auditRetentionTask,
  deliveryLeasesTask,
  diagnosticsTask,
  outboxPruneTask,
  previewRetentionTask,
  startMaintenance,
  webhookCleanupTask,
  workOrdersTask,
  type Maintenance,
  type MaintenanceTask,
} from '../src/index.ts';
import {
  createReplica,
  insertDelivery,
  insertSubscription,
  manual,
  metricValue,
  seedAgentAndObject,
  statusOf,
  type Replica,
} from './support.ts';

describe('maintenance tasks', () => {
  const infra = useTestInfra({ nats: true });
  let replica: Replica;
  let maintenance: Maintenance;
  let seed: Awaited<ReturnType<typeof seedAgentAndObject>>;

  before(async () => {
    replica = await createReplica(infra.db.url, infra.nats.url);
    // A small batch so that every statement has to repeat within one tick.
    maintenance = await manual(replica, { BROKKR__MAINTENANCE__BATCH_SIZE: '2' });
    seed = await seedAgentAndObject(replica.db);
  });
  after(async () => {
    await maintenance?.stop();
    await replica?.close();
  });

  const sql = (text: string, values?: unknown[]) => replica.db.query(text, values);
  /** Ticks twice: the second tick must find nothing left to do (idempotent). */
  async function tickTwice(task: MaintenanceTask): Promise<number> {
    const first = await maintenance.tick(task);
    expect(first.outcome).to.equal('ok');
    const second = await maintenance.tick(task);
    expect(second).to.deep.equal({ outcome: 'ok', rows: 0 });
    return first.rows;
  }

  it('returns expired delivery leases (counting the interrupted attempt) and due retries to pending, and wakes the dispatchers', async () => {
    const sub = await insertSubscription(replica.db);
    const expired = await Promise.all(
      [1, 2, 3].map(() =>
        insertDelivery(replica.db, sub, {
          status: `'acquired'`,
          acquired_by: `'${seed.agentId}'`,
          acquired_until: `now() - interval '1 second'`,
        }),
      ),
    );
    const leased = await insertDelivery(replica.db, sub, { status: `'acquired'`, acquired_until: `now() + interval '1 minute'` });
    const due = await insertDelivery(replica.db, sub, { status: `'failed'`, attempts: '1', next_retry_at: `now() - interval '1 second'` });
    const later = await insertDelivery(replica.db, sub, { status: `'failed'`, attempts: '1', next_retry_at: `now() + interval '1 hour'` });
    const wakeups: Msg[] = [];
    const subscription = replica.bus.nc.subscribe('brokkr.notify.deliveries', { callback: (_err, msg) => void wakeups.push(msg) });

    expect(await tickTwice(deliveryLeasesTask)).to.equal(4);

    for (const id of expired) {
      // The attempt in flight when the lease ran out is counted.
      const row = await statusOf(replica.db, 'webhook_deliveries', id);
      expect(row).to.include({ status: 'pending', acquired_by: null, acquired_until: null, attempts: 1 });
      expect(row?.last_error).to.match(/^Request interrupted: the lease expired/);
    }
    expect(await statusOf(replica.db, 'webhook_deliveries', due)).to.include({ status: 'pending', next_retry_at: null, attempts: 1 });
    expect((await statusOf(replica.db, 'webhook_deliveries', leased))?.status).to.equal('acquired');
    expect((await statusOf(replica.db, 'webhook_deliveries', later))?.status).to.equal('failed');
    await eventually(() => wakeups.length >= 1, { what: 'a brokkr.notify.deliveries wake-up' });
    expect(wakeups[0]!.json()).to.deep.equal({ source: 'maintenance', released_leases: 3, requeued_retries: 1 });
    subscription.unsubscribe();
    expect(await metricValue(replica.metrics, 'brokkr_maintenance_rows_affected_total', { task: 'delivery-leases' })).to.equal(4);
  });

  it('promotes due work-order retries and releases stale claims', async () => {
    const insert = async (fields: string, values: string) =>
      (await sql(`INSERT INTO work_orders (work_type, yaml_content, ${fields}) VALUES ('build', 'x', ${values}) RETURNING id`)).rows[0]!
        .id as string;
    const dueRetry = await insert('status, retry_count, next_retry_after', `'RETRY_PENDING', 1, now() - interval '1 second'`);
    const laterRetry = await insert('status, retry_count, next_retry_after', `'RETRY_PENDING', 1, now() + interval '1 hour'`);
    const stale = await insert(
      'status, claimed_by, claimed_at, claim_timeout_seconds, retry_count',
      `'CLAIMED', '${seed.agentId}', now() - interval '2 minutes', 60, 2`,
    );
    const fresh = await insert(
      'status, claimed_by, claimed_at, claim_timeout_seconds',
      `'CLAIMED', '${seed.agentId}', now() - interval '2 minutes', 3600`,
    );

    expect(await tickTwice(workOrdersTask)).to.equal(2);

    expect(await statusOf(replica.db, 'work_orders', dueRetry)).to.include({ status: 'PENDING', next_retry_after: null, retry_count: 1 });
    expect((await statusOf(replica.db, 'work_orders', laterRetry))?.status).to.equal('RETRY_PENDING');
    expect(await statusOf(replica.db, 'work_orders', stale)).to.include({
      status: 'PENDING',
      claimed_by: null,
      claimed_at: null,
      retry_count: 2,
    });
    expect(await statusOf(replica.db, 'work_orders', fresh)).to.include({ status: 'CLAIMED', claimed_by: seed.agentId });
  });

  it('expires and fails overdue diagnostics, then deletes finished ones past the max age', async () => {
    const insert = async (status: string, created: string, expires: string, extra = '') => {
      const { rows } = await sql(
        `INSERT INTO diagnostic_requests (agent_id, deployment_object_id, status, created_at, expires_at ${extra ? ', claimed_at' : ''})
         VALUES ($1, $2, $3, now() - interval '${created}', now() + interval '${expires}' ${extra ? `, ${extra}` : ''}) RETURNING id`,
        [seed.agentId, seed.objectId, status],
      );
      return rows[0]!.id as string;
    };
    const unclaimed = await insert('pending', '30 minutes', '-1 second');
    const claimed = await insert('claimed', '30 minutes', '-1 second', `now() - interval '20 minutes'`);
    const live = await insert('pending', '1 minute', '59 minutes');
    const oldDone = await insert('completed', '2 hours', '-1 hour');
    await sql(`INSERT INTO diagnostic_results (request_id, pod_statuses, events, collected_at) VALUES ($1, '[]', '[]', now())`, [oldDone]);
    const recentDone = await insert('completed', '10 minutes', '50 minutes');

    expect(await tickTwice(diagnosticsTask)).to.equal(3);

    expect((await statusOf(replica.db, 'diagnostic_requests', unclaimed))?.status).to.equal('expired');
    const failed = await statusOf(replica.db, 'diagnostic_requests', claimed);
    expect(failed?.status).to.equal('failed');
    expect(failed?.completed_at).to.be.instanceOf(Date);
    expect(failed?.claimed_at).to.be.instanceOf(Date);
    expect((await statusOf(replica.db, 'diagnostic_requests', live))?.status).to.equal('pending');
    expect(await statusOf(replica.db, 'diagnostic_requests', oldDone)).to.equal(undefined);
    expect((await sql('SELECT count(*)::int AS n FROM diagnostic_results WHERE request_id = $1', [oldDone])).rows[0]?.n).to.equal(0);
    expect((await statusOf(replica.db, 'diagnostic_requests', recentDone))?.status).to.equal('completed');
  });

  it('deletes finished webhook deliveries past the retention, in bounded batches', async () => {
    const sub = await insertSubscription(replica.db);
    const old = `now() - interval '8 days'`;
    const doomed = await Promise.all(
      ['success', 'success', 'dead', 'dead', 'success'].map((status) =>
        insertDelivery(replica.db, sub, { status: `'${status}'`, created_at: old }),
      ),
    );
    const oldFailed = await insertDelivery(replica.db, sub, { status: `'failed'`, created_at: old });
    const recent = await insertDelivery(replica.db, sub, { status: `'success'`, created_at: `now() - interval '6 days'` });

    expect(await tickTwice(webhookCleanupTask)).to.equal(5);

    for (const id of doomed) expect(await statusOf(replica.db, 'webhook_deliveries', id)).to.equal(undefined);
    expect(await statusOf(replica.db, 'webhook_deliveries', oldFailed)).to.not.equal(undefined);
    expect(await statusOf(replica.db, 'webhook_deliveries', recent)).to.not.equal(undefined);
  });

  it('deletes audit entries older than the audit retention, by created_at', async () => {
    const insert = async (age: string) =>
      (
        await sql(
          `INSERT INTO audit_logs (actor_type, action, resource_type, "timestamp", created_at)
           VALUES ('system', 'auth.failed', 'system', now(), now() - interval '${age}') RETURNING id`,
        )
      ).rows[0]!.id as string;
    const old = [await insert('91 days'), await insert('200 days'), await insert('365 days')];
    const kept = await insert('89 days');

    expect(await tickTwice(auditRetentionTask)).to.equal(3);

    for (const id of old) expect(await statusOf(replica.db, 'audit_logs', id)).to.equal(undefined);
    expect(await statusOf(replica.db, 'audit_logs', kept)).to.not.equal(undefined);
  });

  it('hard-deletes agent events older than their retention', async () => {
    const insert = async (age: string, deleted = false) =>
      (
        await sql(
          `INSERT INTO agent_events (agent_id, deployment_object_id, event_type, status, created_at, deleted_at)
           VALUES ($1, $2, 'DEPLOY', 'SUCCESS', now() - interval '${age}', ${deleted ? 'now()' : 'NULL'}) RETURNING id`,
          [seed.agentId, seed.objectId],
        )
      ).rows[0]!.id as string;
    const old = [await insert('31 days'), await insert('40 days', true)];
    const kept = await insert('29 days');

    expect(await tickTwice(agentEventsRetentionTask)).to.equal(2);

    for (const id of old) expect(await statusOf(replica.db, 'agent_events', id)).to.equal(undefined);
    expect(await statusOf(replica.db, 'agent_events', kept)).to.not.equal(undefined);
  });

  it('prunes published outbox rows past the outbox retention and keeps unpublished ones', async () => {
    const insert = async (published: string | null, created = 'now()') =>
      (
        await sql(
          `INSERT INTO outbox (id, event_type, subject, payload, created_at, published_at)
           VALUES (gen_random_uuid(), 'stack.created', 'brokkr.events.stack.created', '{}', ${created}, ${published ?? 'NULL'}) RETURNING id`,
        )
      ).rows[0]!.id as string;
    const old = [await insert(`now() - interval '25 hours'`), await insert(`now() - interval '3 days'`)];
    const recent = await insert(`now() - interval '1 hour'`);
    const unpublished = await insert(null, `now() - interval '3 days'`);

    expect(await tickTwice(outboxPruneTask)).to.equal(2);

    for (const id of old) expect(await statusOf(replica.db, 'outbox', id)).to.equal(undefined);
    expect(await statusOf(replica.db, 'outbox', recent)).to.not.equal(undefined);
    expect(await statusOf(replica.db, 'outbox', unpublished)).to.not.equal(undefined);
  });

  it('deletes diff previews (with their results) past the preview retention after their window ended', async () => {
    const insert = async (expires: string) =>
      (
        await sql(`INSERT INTO previews (stack_id, yaml_content, expires_at) VALUES ($1, 'kind: ConfigMap', ${expires}) RETURNING id`, [
          seed.stackId,
        ])
      ).rows[0]!.id as string;
    const old = [await insert(`now() - interval '25 hours'`), await insert(`now() - interval '3 days'`)];
    await sql(`INSERT INTO preview_agents (preview_id, agent_id, status) VALUES ($1, $2, 'clean')`, [old[0], seed.agentId]);
    const recent = await insert(`now() - interval '1 hour'`);
    const open = await insert(`now() + interval '10 minutes'`);

    expect(await tickTwice(previewRetentionTask)).to.equal(2);

    for (const id of old) expect(await statusOf(replica.db, 'previews', id)).to.equal(undefined);
    for (const id of [recent, open]) expect(await statusOf(replica.db, 'previews', id)).to.not.equal(undefined);
    expect((await sql('SELECT count(*)::int AS n FROM preview_agents WHERE preview_id = $1', [old[0]])).rows[0]!.n).to.equal(0);
  });

  it('treats a retention of 0 as "keep everything"', async () => {
    const other = await startMaintenance(
      { ...replica.ctx, metrics: createMetricsRegistry({ service: 'maintenance', defaultMetrics: false }) },
      { tasks: [], env: { BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS: '0', BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS: '0' } },
    );
    try {
      const ancient = await sql(
        `INSERT INTO audit_logs (actor_type, action, resource_type, created_at) VALUES ('system', 'x', 'system', now() - interval '10 years') RETURNING id`,
      );
      expect(await other.tick(auditRetentionTask)).to.deep.equal({ outcome: 'ok', rows: 0 });
      expect(await other.tick(agentEventsRetentionTask)).to.deep.equal({ outcome: 'ok', rows: 0 });
      expect(await statusOf(replica.db, 'audit_logs', ancient.rows[0]!.id as string)).to.not.equal(undefined);
    } finally {
      await other.stop();
    }
  });
});
