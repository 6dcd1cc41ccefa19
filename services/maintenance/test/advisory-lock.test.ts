import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { deliveryLeasesTask, type Maintenance, type MaintenanceTask } from '../src/index.ts';
import { createReplica, insertDelivery, insertSubscription, manual, metricValue, type Replica } from './support.ts';

/** A task that holds its lock until the test lets it go, to make two replicas overlap for sure. */
function gatedTask(name: string) {
  let open!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let runs = 0;
  const task: MaintenanceTask = {
    name,
    intervalSeconds: () => 60,
    async run() {
      runs++;
      entered();
      await gate;
      return 1;
    },
  };
  return { task, open, inside, runs: () => runs };
}

describe('maintenance advisory locks', () => {
  const infra = useTestInfra({ nats: true });
  let replicas: Replica[];
  let instances: Maintenance[];

  before(async () => {
    // Two replicas: separate pools and NATS connections, as two processes would have.
    replicas = [await createReplica(infra.db.url, infra.nats.url), await createReplica(infra.db.url, infra.nats.url)];
    instances = [await manual(replicas[0]!), await manual(replicas[1]!)];
  });
  after(async () => {
    for (const m of instances ?? []) await m.stop();
    for (const r of replicas ?? []) await r.close();
  });

  it('lets only one replica run a task while the other skips the tick', async () => {
    const gated = gatedTask('gated');
    const first = instances[0]!.tick(gated.task);
    await gated.inside;
    expect(await instances[1]!.tick(gated.task)).to.deep.equal({ outcome: 'skipped', rows: 0 });
    gated.open();
    expect(await first).to.deep.equal({ outcome: 'ok', rows: 1 });
    expect(gated.runs()).to.equal(1);
    expect(await metricValue(replicas[1]!.metrics, 'brokkr_maintenance_runs_total', { task: 'gated', outcome: 'skipped' })).to.equal(1);
    // The lock was released: the other replica gets the next tick.
    expect(await instances[1]!.tick(gated.task)).to.deep.equal({ outcome: 'ok', rows: 1 });
  });

  it('does not block other tasks', async () => {
    const a = gatedTask('task-a');
    const b = gatedTask('task-b');
    const runningA = instances[0]!.tick(a.task);
    await a.inside;
    b.open();
    expect(await instances[1]!.tick(b.task)).to.deep.equal({ outcome: 'ok', rows: 1 });
    a.open();
    await runningA;
  });

  it('releases the lock when a task fails', async () => {
    const failing: MaintenanceTask = {
      name: 'failing',
      intervalSeconds: () => 60,
      run: () => Promise.reject(new Error('boom')),
    };
    expect(await instances[0]!.tick(failing)).to.deep.equal({ outcome: 'error', rows: 0 });
    expect(await metricValue(replicas[0]!.metrics, 'brokkr_maintenance_errors_total', { task: 'failing' })).to.equal(1);
    const gated = gatedTask('failing');
    gated.open();
    expect(await instances[1]!.tick(gated.task)).to.deep.equal({ outcome: 'ok', rows: 1 });
  });

  it('changes each row once when real ticks of two replicas race', async () => {
    const sub = await insertSubscription(replicas[0]!.db);
    for (let i = 0; i < 50; i++) {
      await insertDelivery(replicas[0]!.db, sub, { status: `'acquired'`, acquired_until: `now() - interval '1 second'` });
    }
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => instances[i % 2]!.tick(deliveryLeasesTask)));
    expect(results.every((r) => r.outcome !== 'error')).to.equal(true);
    expect(results.reduce((sum, r) => sum + r.rows, 0)).to.equal(50);
    const { rows } = await replicas[0]!.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
    );
    expect(rows[0]!.n).to.equal(50);
  });
});
