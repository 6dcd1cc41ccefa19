import type { MaintenanceConfig } from '@brokkr/config';
import type { HubContext, RunningWork } from '@brokkr/runtime';
import { createMaintenanceMetrics, type MaintenanceMetrics } from './metrics.ts';
import { lockPrefix, runTaskTick, type TaskRunnerDeps } from './runner/run-task.ts';
import { Scheduler } from './runner/scheduler.ts';
import { watchConfigFile } from './settings/file-watcher.ts';
import { LiveSettings } from './settings/live-settings.ts';
import { loadSettings, SETTING_KEYS, type Settings } from './settings/reloadable.ts';
import { subscribeConfigReload } from './settings/reload-subscription.ts';
import { ALL_TASKS } from './tasks/index.ts';
import type { MaintenanceTask } from './tasks/task.ts';

export interface MaintenanceOptions {
  /** Defaults to every task; tests pick some. */
  tasks?: readonly MaintenanceTask[];
  /** Where reloads read the environment layer from. Default process.env. */
  env?: NodeJS.ProcessEnv;
  initialJitterMs?: number;
}

export interface Maintenance extends RunningWork {
  settings: LiveSettings;
  /** Runs one tick of a task now, under its lock, with metrics (what the timers do). */
  tick(task: MaintenanceTask): ReturnType<typeof runTaskTick>;
}

function setGauges(metrics: MaintenanceMetrics, settings: Settings): void {
  for (const key of SETTING_KEYS) {
    const value = settings[key];
    if (typeof value === 'number') metrics.setting.set({ key }, value);
  }
}

/**
 * The maintenance service's work: the task timers, plus the reloadable settings (defaults <
 * BROKKR_CONFIG_FILE < environment), re-read on `brokkr.config.reload` and when the file changes.
 */
export async function startMaintenance(ctx: HubContext<MaintenanceConfig>, options: MaintenanceOptions = {}): Promise<Maintenance> {
  const { config, logger, db, bus } = ctx;
  const env = options.env ?? process.env;
  const metrics = createMaintenanceMetrics(ctx.metrics);
  const read = () => loadSettings(env, config.BROKKR_CONFIG_FILE);
  const settings = new LiveSettings(await read(), read);
  logger.level = settings.current.BROKKR__LOG__LEVEL;
  setGauges(metrics, settings.current);

  const deps: TaskRunnerDeps = {
    pool: db.pool,
    lockPrefix: lockPrefix(db.schema),
    settings: () => settings.current,
    js: bus.js,
    nc: bus.nc,
    logger,
    metrics,
  };
  const tick = (task: MaintenanceTask) => runTaskTick(task, deps);
  const scheduler = new Scheduler({
    tasks: options.tasks ?? ALL_TASKS,
    settings: () => settings.current,
    tick,
    onInterval: (task, seconds) => metrics.interval.set({ task: task.name }, seconds),
    logger,
    ...(options.initialJitterMs === undefined ? {} : { initialJitterMs: options.initialJitterMs }),
  });
  settings.onChange((next, changes) => {
    logger.level = next.BROKKR__LOG__LEVEL;
    setGauges(metrics, next);
    scheduler.reschedule();
    logger.info({ changes }, `configuration applied: ${changes.length} setting(s) changed`);
  });

  const reload = (trigger: 'broadcast' | 'file') => {
    settings.reload().then(
      () => metrics.reloads.inc({ trigger, outcome: 'ok' }),
      (err: unknown) => {
        metrics.reloads.inc({ trigger, outcome: 'error' });
        logger.error({ err, trigger }, 'configuration reload failed; keeping the current settings');
      },
    );
  };
  const subscription = subscribeConfigReload(
    bus.nc,
    (notice) => {
      logger.info({ source: notice.source, reloaded_at: notice.reloaded_at }, 'config reload requested');
      reload('broadcast');
    },
    logger,
  );
  // The subscription is live on the server before start() returns, so no broadcast sent after
  // the service reports ready is missed.
  await bus.nc.flush();
  const file = config.BROKKR_CONFIG_FILE;
  const watcher =
    file && config.BROKKR_CONFIG_WATCHER_ENABLED
      ? watchConfigFile(file, config.BROKKR_CONFIG_WATCHER_DEBOUNCE_SECONDS * 1000, () => reload('file'), logger)
      : undefined;

  scheduler.start();
  logger.info({ tasks: (options.tasks ?? ALL_TASKS).map((t) => t.name), configFile: file }, 'maintenance tasks scheduled');
  return {
    settings,
    tick,
    async stop() {
      watcher?.close();
      subscription.close();
      await scheduler.stop();
    },
  };
}
