import type pg from 'pg';
import type { JetStreamClient, NatsConnection } from '@brokkr/bus';
import { withAdvisoryLock } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { MaintenanceMetrics, RunOutcome } from '../metrics.ts';
import type { Settings } from '../settings/reloadable.ts';
import { taskSettings } from '../settings/task-settings.ts';
import type { MaintenanceTask } from '../tasks/task.ts';

export interface TaskRunnerDeps {
  pool: pg.Pool;
  /** Prefix of every lock name; includes the schema (advisory locks are per database). */
  lockPrefix: string;
  settings: () => Settings;
  js: JetStreamClient;
  nc: NatsConnection;
  logger: Logger;
  metrics: MaintenanceMetrics;
}

export interface TickResult {
  outcome: RunOutcome;
  rows: number;
}

export function lockPrefix(schema: string | undefined): string {
  return `brokkr.maintenance:${schema ?? 'public'}:`;
}

/**
 * One tick of a task on this replica: take the task's advisory lock or skip (another replica
 * is running it), run it, record the outcome. Never throws: a failed tick is counted, logged
 * and retried on the next one.
 */
export async function runTaskTick(task: MaintenanceTask, deps: TaskRunnerDeps): Promise<TickResult> {
  const logger = deps.logger.child({ task: task.name });
  const started = process.hrtime.bigint();
  try {
    const locked = await withAdvisoryLock(deps.pool, deps.lockPrefix + task.name, (client) =>
      task.run({ db: client, settings: taskSettings(deps.settings()), js: deps.js, nc: deps.nc, logger }),
    );
    if (!locked.acquired) {
      deps.metrics.runs.inc({ task: task.name, outcome: 'skipped' });
      logger.trace('another replica holds the task lock; skipped');
      return { outcome: 'skipped', rows: 0 };
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    deps.metrics.duration.observe({ task: task.name }, seconds);
    deps.metrics.runs.inc({ task: task.name, outcome: 'ok' });
    deps.metrics.rowsAffected.inc({ task: task.name }, locked.value);
    if (locked.value > 0) logger.info({ rows: locked.value, seconds }, `${task.name}: ${locked.value} row(s)`);
    return { outcome: 'ok', rows: locked.value };
  } catch (err) {
    deps.metrics.runs.inc({ task: task.name, outcome: 'error' });
    deps.metrics.errors.inc({ task: task.name });
    logger.error({ err }, `${task.name} failed; retrying on the next tick`);
    return { outcome: 'error', rows: 0 };
  }
}
