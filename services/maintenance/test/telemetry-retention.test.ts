import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { telemetryRetentionTask, type Maintenance } from '../src/index.ts';
import { createReplica, manual, metricValue, seedAgentAndObject, type Replica } from './support.ts';

describe('telemetry retention (maintenance)', () => {
  const infra = useTestInfra({ nats: true });
  let replica: Replica;
  let maintenance: Maintenance;

  before(async () => {
    replica = await createReplica(infra.db.url, infra.nats.url);
    // A small batch so that eviction has to repeat within one tick.
    maintenance = await manual(replica, { BROKKR__MAINTENANCE__BATCH_SIZE: '2' });
  });
  after(async () => {
    await maintenance?.stop();
    await replica?.close();
  });

  const count = async (table: string, stackId: string) =>
    Number((await replica.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE stack_id = $1`, [stackId])).rows[0]!.n);

  it('deletes Kubernetes events and pod log lines ingested more than 6 hours ago, and keeps younger ones', async () => {
    const { agentId, stackId } = await seedAgentAndObject(replica.db);
    const ages = ['6 hours 1 minute', '7 hours', '2 days', '5 hours 59 minutes', '1 second'];
    for (const age of ages) {
      await replica.db.query(
        `INSERT INTO agent_k8s_events (agent_id, stack_id, observed_at, reason, message, event_type, involved_object, created_at)
         VALUES ($1, $2, now(), 'Pulled', 'm', 'Normal', '{"api_version":"v1","kind":"Pod","name":"p"}', now() - $3::interval)`,
        [agentId, stackId, age],
      );
      await replica.db.query(
        `INSERT INTO agent_pod_logs (agent_id, stack_id, namespace, pod, container, ts, line, created_at)
         VALUES ($1, $2, 'default', 'p', 'c', now(), 'line', now() - $3::interval)`,
        [agentId, stackId, age],
      );
    }

    const first = await maintenance.tick(telemetryRetentionTask);
    expect(first).to.deep.equal({ outcome: 'ok', rows: 6 });
    expect(await count('agent_k8s_events', stackId)).to.equal(2);
    expect(await count('agent_pod_logs', stackId)).to.equal(2);
    // Idempotent: nothing left to evict.
    expect(await maintenance.tick(telemetryRetentionTask)).to.deep.equal({ outcome: 'ok', rows: 0 });
    expect(await metricValue(replica.metrics, 'brokkr_maintenance_rows_affected_total', { task: 'telemetry-retention' })).to.equal(6);
  });
});
