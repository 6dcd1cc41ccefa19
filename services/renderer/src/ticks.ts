import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import {
  HEARTBEAT_SECONDS,
  deleteAbandonedRenderJobs,
  forgetDeadRenderers,
  registerRenderer,
  renderQueueDepth,
  type RendererRegistration,
} from '@brokkr/render-jobs';
import type { RendererMetrics } from './metrics.ts';
import type { RenderWorker } from './worker.ts';

/** How often the worker looks at the queue without a wake-up: jobs whose lease ran out, wake-ups lost while LISTEN was down. */
const LOOK_MS = 2000;
const CLEAN_UP_MS = 60_000;

export interface TickDeps {
  db: Queryable;
  worker: RenderWorker;
  registration: RendererRegistration;
  metrics: RendererMetrics;
  logger: Logger;
}

export interface Ticks {
  /** When this renderer's row was last written (0: never), for readiness. */
  readonly lastHeartbeat: number;
  heartbeat(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs `task` every `ms`, never two at once; a failure is logged and the next run tries again. */
function every(ms: number, what: string, task: () => Promise<void>, logger: Logger) {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= task()
      .catch((err: unknown) => logger.warn({ err }, `${what} failed; trying again`))
      .finally(() => (running = undefined));
  }, ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * The renderer's periodic work: a look at the queue (claims what is due, refreshes the queue
 * gauges), the heartbeat that keeps it in the registry the api reads, and the clean-up of what dead
 * apis and renderers left behind (idempotent, so every replica may run it).
 */
export function startTicks(deps: TickDeps): Ticks {
  const { db, metrics, logger } = deps;
  let lastHeartbeat = 0;
  const heartbeat = async () => {
    await registerRenderer(db, deps.registration);
    lastHeartbeat = Date.now();
  };
  const look = async () => {
    deps.worker.wake();
    const depth = await renderQueueDepth(db);
    metrics.queueJobs.set({ state: 'pending' }, depth.pending);
    metrics.queueJobs.set({ state: 'running' }, depth.running);
    metrics.queueOldestPending.set(depth.oldestPendingSeconds);
  };
  const cleanUp = async () => {
    const jobs = await deleteAbandonedRenderJobs(db);
    const renderers = await forgetDeadRenderers(db);
    if (jobs + renderers > 0) logger.info({ jobs, renderers }, 'deleted abandoned render jobs and dead renderers');
  };
  const timers = [
    every(LOOK_MS, 'looking at the render queue', look, logger),
    every(HEARTBEAT_SECONDS * 1000, 'the renderer heartbeat', heartbeat, logger),
    every(CLEAN_UP_MS, 'the render queue clean-up', cleanUp, logger),
  ];
  return {
    get lastHeartbeat() {
      return lastHeartbeat;
    },
    heartbeat,
    async stop() {
      await Promise.all(timers.map((t) => t.stop()));
    },
  };
}
