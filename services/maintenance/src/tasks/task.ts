import type { JetStreamClient, NatsConnection } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
import type { TaskClient } from '../sql/queryable.ts';
import type { TaskSettings } from '../settings/task-settings.ts';

export interface TaskContext {
  /** The connection holding the task's advisory lock; each statement commits on its own. */
  db: TaskClient;
  settings: TaskSettings;
  js: JetStreamClient;
  nc: NatsConnection;
  logger: Logger;
}

/** One periodic job. Its name is the metric label and part of its advisory-lock key. */
export interface MaintenanceTask {
  name: string;
  intervalSeconds(settings: TaskSettings): number;
  /** Does one tick's work; returns the rows it changed, deleted or published. */
  run(ctx: TaskContext): Promise<number>;
}
