import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { publishCore, SUBJECTS } from '@brokkr/bus';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { flattenConfig } from '@brokkr/config';
import { startMaintenance, workOrdersTask, type Maintenance, type MaintenanceTask } from '../src/index.ts';
import { createReplica, metricValue, type Replica } from './support.ts';

const AUDIT = 'BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS';

/** A task on a fixed 1 s timer: its ticks show that a second has passed on the scheduler's clock. */
const probeTask: MaintenanceTask = { name: 'probe', intervalSeconds: () => 1, run: async () => 0 };

describe('maintenance configuration reload', () => {
  const infra = useTestInfra({ nats: true });
  let dir: string;
  const open: { replica: Replica; maintenance?: Maintenance }[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-config-'));
  });
  afterEach(async () => {
    for (const { replica, maintenance } of open.splice(0)) {
      await maintenance?.stop();
      await replica.close();
    }
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function start(file: string, env: Record<string, string> = {}, tasks: MaintenanceTask[] = [workOrdersTask]) {
    const replica = await createReplica(infra.db.url, infra.nats.url, {
      BROKKR_CONFIG_FILE: file,
      BROKKR_CONFIG_WATCHER_DEBOUNCE_SECONDS: '0',
      ...env,
    });
    const entry: { replica: Replica; maintenance?: Maintenance } = { replica };
    open.push(entry);
    entry.maintenance = await startMaintenance(replica.ctx, { tasks, env, initialJitterMs: 0 });
    return { replica, maintenance: entry.maintenance };
  }
  const gauge = (replica: Replica, key: string) => metricValue(replica.metrics, 'brokkr_maintenance_setting', { key });
  const interval = (replica: Replica, task: string) => metricValue(replica.metrics, 'brokkr_maintenance_interval_seconds', { task });
  const runs = (replica: Replica, task: string) => metricValue(replica.metrics, 'brokkr_maintenance_runs_total', { task, outcome: 'ok' });

  it('maps Brokkr TOML sections to BROKKR__SECTION__KEY names', () => {
    expect(
      flattenConfig({ log: { level: 'warn' }, broker: { audit_log_retention_days: 30 }, cors: { allowed_origins: ['a', 'b'] } }),
    ).to.deep.equal({
      BROKKR__LOG__LEVEL: 'warn',
      BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS: 30,
      BROKKR__CORS__ALLOWED_ORIGINS: 'a,b',
    });
  });

  it('applies the file at start-up, with the environment taking precedence', async () => {
    const file = path.join(dir, 'start.toml');
    await writeFile(
      file,
      '[log]\nlevel = "warn"\n[broker]\naudit_log_retention_days = 30\nagent_events_retention_days = 3\n[maintenance]\nwork_order_interval_seconds = 42\n',
    );
    const { replica, maintenance } = await start(file, { BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS: '9' });
    expect(replica.ctx.logger.level).to.equal('warn');
    expect(maintenance.settings.current[AUDIT]).to.equal(30);
    expect(await gauge(replica, AUDIT)).to.equal(30);
    expect(await gauge(replica, 'BROKKR__BROKER__AGENT_EVENTS_RETENTION_DAYS')).to.equal(9);
    expect(await interval(replica, 'work-orders')).to.equal(42);
  });

  it('re-reads the file when it changes and applies intervals, retentions and the log level at once', async () => {
    const file = path.join(dir, 'watched.toml');
    await writeFile(file, '[maintenance]\nwork_order_interval_seconds = 1\n');
    const { replica } = await start(file, {}, [workOrdersTask, probeTask]);
    // The timers really run: the task ticks every second.
    await eventually(async () => (await runs(replica, 'work-orders')) >= 2, { what: 'two scheduled ticks' });
    await writeFile(
      file,
      '[log]\nlevel = "error"\n[broker]\naudit_log_retention_days = 7\n[maintenance]\nwork_order_interval_seconds = 600\n',
    );
    await eventually(async () => (await interval(replica, 'work-orders')) === 600, { what: 'the new interval' });
    expect(await gauge(replica, AUDIT)).to.equal(7);
    expect(replica.ctx.logger.level).to.equal('error');
    expect(
      await metricValue(replica.metrics, 'brokkr_maintenance_config_reloads_total', { trigger: 'file', outcome: 'ok' }),
    ).to.be.greaterThan(0);
    // With a 10-minute interval, no further tick comes. The probe's 1 s timer is the clock: once it
    // has ticked (a work-orders tick in flight at the change has ended by then) and then three times
    // more (two whole periods), a work-orders timer still on 1 s would have fired at least once.
    const probeTicks = async (more: number) => {
      const target = (await runs(replica, 'probe')) + more;
      await eventually(async () => (await runs(replica, 'probe')) >= target, { what: `${more} more probe tick(s)` });
    };
    await probeTicks(1);
    const workOrderRuns = await runs(replica, 'work-orders');
    await probeTicks(3);
    expect(await runs(replica, 'work-orders')).to.equal(workOrderRuns);
  });

  it('re-reads on a brokkr.config.reload broadcast (every replica) and keeps its settings when the file is invalid', async () => {
    const file = path.join(dir, 'broadcast.json');
    await writeFile(file, JSON.stringify({ broker: { audit_log_retention_days: 11 } }));
    const env = { BROKKR_CONFIG_WATCHER_ENABLED: 'false' };
    const a = await start(file, env);
    const b = await start(file, env);
    await writeFile(file, JSON.stringify({ broker: { audit_log_retention_days: 12 } }));
    publishCore(a.replica.bus.nc, SUBJECTS.configReload, { reloaded_at: new Date().toISOString(), source: 'test' });
    for (const { replica } of [a, b])
      await eventually(async () => (await gauge(replica, AUDIT)) === 12, { what: 'both replicas to apply' });

    await writeFile(file, '{ not json');
    publishCore(a.replica.bus.nc, SUBJECTS.configReload, {});
    await eventually(
      async () =>
        (await metricValue(a.replica.metrics, 'brokkr_maintenance_config_reloads_total', { trigger: 'broadcast', outcome: 'error' })) === 1,
      { what: 'the failed reload' },
    );
    expect(a.maintenance.settings.current[AUDIT]).to.equal(12);

    await writeFile(file, JSON.stringify({ broker: { audit_log_retention_days: -1 } }));
    await a.maintenance.settings.reload().then(
      () => expect.fail('a negative retention must be rejected'),
      (err: Error) => expect(err.message).to.match(/AUDIT_LOG_RETENTION_DAYS/),
    );
    expect(await gauge(a.replica, AUDIT)).to.equal(12);
  });

  it('reports what changed, with Brokkr key names', async () => {
    const file = path.join(dir, 'diff.toml');
    await writeFile(file, '');
    const { maintenance } = await start(file, { BROKKR_CONFIG_WATCHER_ENABLED: 'false' });
    await writeFile(file, '[log]\nlevel = "debug"\n[broker]\ndiagnostic_max_age_hours = 3\n');
    expect(await maintenance.settings.reload()).to.deep.equal([
      { key: 'log.level', old_value: 'info', new_value: 'debug' },
      { key: 'broker.diagnostic_max_age_hours', old_value: '1', new_value: '3' },
    ]);
    expect(await maintenance.settings.reload()).to.deep.equal([]);
  });
});
