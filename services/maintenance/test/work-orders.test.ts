import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Msg } from '@brokkr/bus';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { workOrdersTask, type Maintenance } from '../src/index.ts';
import { createReplica, manual, statusOf, type Replica } from './support.ts';

/**
 * The work-order task beyond the state changes (tasks.test.ts): released claims are audited
 * once (`workorder.claim_released`, in audit_logs and on BROKKR_AUDIT), and the agents the
 * orders target (explicit ids, labels, annotations) are woken.
 */
describe('maintenance work orders: audit and wake-ups', () => {
  const infra = useTestInfra({ nats: true });
  let replica: Replica;
  let maintenance: Maintenance;

  before(async () => {
    replica = await createReplica(infra.db.url, infra.nats.url);
    maintenance = await manual(replica, { BROKKR__MAINTENANCE__BATCH_SIZE: '2' });
  });
  after(async () => {
    await maintenance?.stop();
    await replica?.close();
  });

  const sql = (text: string, values?: unknown[]) => replica.db.query(text, values);

  async function agent(label?: string, annotation?: [string, string]): Promise<string> {
    const { rows } = await sql("INSERT INTO agents (name, cluster_name, status) VALUES ($1, 'c', 'ACTIVE') RETURNING id", [
      `a-${randomUUID().slice(0, 8)}`,
    ]);
    const id = rows[0]!.id as string;
    if (label) await sql('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [id, label]);
    if (annotation) await sql('INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3)', [id, ...annotation]);
    return id;
  }

  async function order(fields: string, values: string, targeting: { agent?: string; label?: string; annotation?: [string, string] }) {
    const { rows } = await sql(
      `INSERT INTO work_orders (work_type, yaml_content, ${fields}) VALUES ('custom', 'x', ${values}) RETURNING id`,
    );
    const id = rows[0]!.id as string;
    if (targeting.agent) await sql('INSERT INTO work_order_targets (work_order_id, agent_id) VALUES ($1, $2)', [id, targeting.agent]);
    if (targeting.label) await sql('INSERT INTO work_order_labels (work_order_id, label) VALUES ($1, $2)', [id, targeting.label]);
    if (targeting.annotation) {
      await sql('INSERT INTO work_order_annotations (work_order_id, key, value) VALUES ($1, $2, $3)', [id, ...targeting.annotation]);
    }
    return id;
  }

  it('audits each released claim once and wakes the targeted agents of released and promoted orders', async () => {
    const label = `l-${randomUUID().slice(0, 8)}`;
    const holder = await agent();
    const byLabel = await agent(label);
    const byAnnotation = await agent(undefined, ['zone', label]);
    const byId = await agent();
    const bystander = await agent('unrelated');
    const stale = await order(
      'status, claimed_by, claimed_at, claim_timeout_seconds',
      `'CLAIMED', '${holder}', now() - interval '2 minutes', 60`,
      { label },
    );
    const stale2 = await order(
      'status, claimed_by, claimed_at, claim_timeout_seconds',
      `'CLAIMED', '${holder}', now() - interval '2 minutes', 60`,
      { annotation: ['zone', label] },
    );
    const stale3 = await order(
      'status, claimed_by, claimed_at, claim_timeout_seconds',
      `'CLAIMED', '${holder}', now() - interval '2 minutes', 60`,
      { label: 'nobody-has-this' },
    );
    const due = await order('status, retry_count, next_retry_after', `'RETRY_PENDING', 1, now() - interval '1 second'`, { agent: byId });

    const woken: string[] = [];
    const subscription = replica.bus.nc.subscribe('brokkr.notify.agent.*', {
      callback: (_err, msg: Msg) => void woken.push((msg.json() as { agent_id: string }).agent_id),
    });
    await replica.bus.nc.flush();

    const first = await maintenance.tick(workOrdersTask);
    expect(first).to.deep.equal({ outcome: 'ok', rows: 4 });
    expect(await maintenance.tick(workOrdersTask)).to.deep.equal({ outcome: 'ok', rows: 0 });

    expect((await statusOf(replica.db, 'work_orders', due))?.status).to.equal('PENDING');
    for (const id of [stale, stale2, stale3]) expect((await statusOf(replica.db, 'work_orders', id))?.status).to.equal('PENDING');

    await eventually(() => woken.length >= 3, { what: 'the agent wake-ups' });
    await replica.bus.nc.flush();
    subscription.unsubscribe();
    expect([...new Set(woken)].sort()).to.deep.equal([byLabel, byAnnotation, byId].sort());
    expect(woken).to.not.include(bystander);
    expect(woken).to.not.include(holder);

    const { rows: audit } = await sql(
      "SELECT id, actor_type, actor_id, resource_type, resource_id, details FROM audit_logs WHERE action = 'workorder.claim_released'",
    );
    expect(audit.map((a) => a.resource_id).sort()).to.deep.equal([stale, stale2, stale3].sort());
    for (const entry of audit) {
      expect(entry).to.include({ actor_type: 'system', actor_id: null, resource_type: 'work_order' });
      expect(entry.details).to.include({ agent_id: holder, claim_timeout_seconds: 60, work_type: 'custom' });
    }
    // The same entries on the stream, under their ids (the audit-writer's insert absorbs them).
    const last = await replica.bus.jsm.streams.getMessage('BROKKR_AUDIT', { last_by_subj: 'brokkr.audit.workorder.claim_released' });
    const published = last!.json<{ id: string; action: string }>();
    expect(audit.map((a) => a.id)).to.include(published.id);
    expect(published.action).to.equal('workorder.claim_released');
  });
});
