export { startMaintenance, type Maintenance, type MaintenanceOptions } from './maintenance.ts';
export { createMaintenanceMetrics, type MaintenanceMetrics, type RunOutcome } from './metrics.ts';
export { runTaskTick, lockPrefix, type TaskRunnerDeps, type TickResult } from './runner/run-task.ts';
export { withAdvisoryLock, type LockedOutcome } from '@brokkr/db';
export { Scheduler } from './runner/scheduler.ts';
export { loadSettings, diffSettings, reloadableSchema, SETTING_KEYS, type Settings, type ConfigChange } from './settings/reloadable.ts';
export { LiveSettings } from './settings/live-settings.ts';
export * from './tasks/index.ts';
