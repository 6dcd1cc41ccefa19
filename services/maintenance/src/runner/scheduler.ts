import type { Logger } from '@brokkr/logger';
import type { Settings } from '../settings/reloadable.ts';
import { taskSettings } from '../settings/task-settings.ts';
import type { MaintenanceTask } from '../tasks/task.ts';

interface Slot {
  task: MaintenanceTask;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  intervalSeconds: number;
}

export interface SchedulerOptions {
  tasks: readonly MaintenanceTask[];
  settings: () => Settings;
  tick: (task: MaintenanceTask) => Promise<unknown>;
  /** Called whenever a task's interval is (re)applied, e.g. to set a gauge. */
  onInterval?: (task: MaintenanceTask, seconds: number) => void;
  logger: Logger;
  /** Upper bound of the random delay before each task's first tick (spreads replicas). Default 1000 ms. */
  initialJitterMs?: number;
}

/**
 * One timer chain per task: tick, then wait the task's interval, then tick again. Ticks of one
 * task never overlap on a replica (the advisory lock keeps replicas apart). The interval is
 * read after every tick, and `reschedule()` re-arms idle tasks at once, so a reloaded interval
 * applies immediately rather than after the old one has run out.
 */
export class Scheduler {
  private readonly slots: Slot[];
  private stopped = false;

  constructor(private readonly options: SchedulerOptions) {
    this.slots = options.tasks.map((task) => ({ task, intervalSeconds: task.intervalSeconds(taskSettings(options.settings())) }));
  }

  start(): void {
    const jitter = this.options.initialJitterMs ?? 1000;
    for (const slot of this.slots) {
      this.options.onInterval?.(slot.task, slot.intervalSeconds);
      this.arm(slot, Math.random() * jitter);
    }
  }

  /** Applies changed intervals: idle tasks are re-armed from now, running ones after their tick. */
  reschedule(): void {
    for (const slot of this.slots) {
      const seconds = slot.task.intervalSeconds(taskSettings(this.options.settings()));
      if (seconds === slot.intervalSeconds) continue;
      this.options.logger.info({ task: slot.task.name, from: slot.intervalSeconds, to: seconds }, 'task interval changed');
      slot.intervalSeconds = seconds;
      this.options.onInterval?.(slot.task, seconds);
      if (!slot.running) this.arm(slot, seconds * 1000);
    }
  }

  /** Stops arming ticks and waits for the ones in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const slot of this.slots) clearTimeout(slot.timer);
    await Promise.allSettled(this.slots.map((slot) => slot.running));
  }

  private arm(slot: Slot, delayMs: number): void {
    clearTimeout(slot.timer);
    if (this.stopped) return;
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      slot.running = this.runSlot(slot);
    }, delayMs);
  }

  private async runSlot(slot: Slot): Promise<void> {
    try {
      await this.options.tick(slot.task);
    } catch (err) {
      this.options.logger.error({ err, task: slot.task.name }, 'maintenance tick failed');
    } finally {
      slot.running = undefined;
      const seconds = slot.task.intervalSeconds(taskSettings(this.options.settings()));
      if (seconds !== slot.intervalSeconds) this.options.onInterval?.(slot.task, seconds);
      slot.intervalSeconds = seconds;
      this.arm(slot, seconds * 1000);
    }
  }
}
