import { metricsFor, type Counter, type Gauge, type Histogram, type Registry } from '@brokkr/telemetry';

export type RunOutcome = 'ok' | 'skipped' | 'error';

export interface MaintenanceMetrics {
  /** outcome: ok (ran), skipped (another replica held the task's lock), error. */
  runs: Counter<'task' | 'outcome'>;
  rowsAffected: Counter<'task'>;
  duration: Histogram<'task'>;
  errors: Counter<'task'>;
  /** The interval each task is scheduled with right now (shows a reload taking effect). */
  interval: Gauge<'task'>;
  /** The numeric reloadable settings as applied (retentions, batch size, …), keyed by config key. */
  setting: Gauge<'key'>;
  reloads: Counter<'trigger' | 'outcome'>;
}

export function createMaintenanceMetrics(registry: Registry): MaintenanceMetrics {
  const m = metricsFor(registry);
  return {
    runs: m.counter({ name: 'brokkr_maintenance_runs_total', help: 'Maintenance task ticks by outcome', labelNames: ['task', 'outcome'] }),
    rowsAffected: m.counter({
      name: 'brokkr_maintenance_rows_affected_total',
      help: 'Rows changed, deleted or published by maintenance tasks',
      labelNames: ['task'],
    }),
    duration: m.histogram({
      name: 'brokkr_maintenance_duration_seconds',
      help: 'Duration of maintenance task ticks that ran',
      labelNames: ['task'],
    }),
    errors: m.counter({ name: 'brokkr_maintenance_errors_total', help: 'Maintenance task ticks that failed', labelNames: ['task'] }),
    interval: m.gauge({
      name: 'brokkr_maintenance_interval_seconds',
      help: 'Current interval of each maintenance task',
      labelNames: ['task'],
    }),
    setting: m.gauge({
      name: 'brokkr_maintenance_setting',
      help: 'Numeric reloadable maintenance settings as currently applied',
      labelNames: ['key'],
    }),
    reloads: m.counter({
      name: 'brokkr_maintenance_config_reloads_total',
      help: 'Configuration re-reads by trigger and outcome',
      labelNames: ['trigger', 'outcome'],
    }),
  };
}
