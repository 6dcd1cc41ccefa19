import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import {
  ALIVE_SECONDS,
  RENDER_DONE_CHANNEL,
  deleteUnwaitedRenderJob,
  doneRenderJobKeys,
  joinRenderJob,
  leaveRenderJob,
  listenChannel,
  liveRendererVersion,
  renderJobKey,
  renderJobResult,
  resultOfRow,
} from '@brokkr/render-jobs';
import type { Engine, EngineJob, EngineResult } from './render.ts';
import { RenderWaiters } from './render-waiters.ts';
import { cachedRendererVersion } from './renderer-version.ts';

/** The engine of an api whose renders are done by the renderer service; close() when the api stops. */
export interface QueuedEngine extends Engine {
  close(): Promise<void>;
}

export interface QueuedEngineOptions {
  db: Queryable;
  /** The database, for the LISTEN connection of its own. */
  databaseUrl: string;
  /** From queueing a job to its result (BROKKR__BROKER__RENDER_WAIT_SECONDS); past it, `busy`. */
  waitMs: number;
  logger: Logger;
}

/** How often the waits look for results whose wake-up was lost. */
const LOOK_FOR_MISSED_MS = 2000;

/**
 * `busy` is the answer when no renderer finishes in time (503 renderer_busy: retry later), never a
 * refusal of the tenant's chart: the job may be fine and the renderers stopped or swamped.
 */
const notInTime = (waitMs: number): EngineResult => ({
  ok: false,
  reason: 'busy',
  error: `no renderer finished this render within ${waitMs / 1000} s: the renderers are busy or stopped; try again later`,
});
const noRenderer: EngineResult = { ok: false, reason: 'busy', error: 'no renderer is running: try again later' };

/**
 * Renders charts and overlays through the renderer service (docs/adr/0046): a job is queued in
 * render_jobs (or joined, when an identical one is queued), the renderers are woken by the same
 * statement's NOTIFY, and this replica waits for the result's NOTIFY, then reads it and leaves the
 * job (the last waiter deletes it). `version()` reads the renderer registry, cached briefly, so an
 * api with no renderer alive answers 503 renderer_unavailable before anything is queued.
 */
export function startQueuedEngine(options: QueuedEngineOptions): QueuedEngine {
  const { db, logger, waitMs } = options;
  const waiters = new RenderWaiters((keys) => doneRenderJobKeys(db, keys), LOOK_FOR_MISSED_MS, logger);
  const listener = listenChannel({
    url: options.databaseUrl,
    channel: RENDER_DONE_CHANNEL,
    applicationName: 'brokkr-api-render-results',
    onNotify: (key) => waiters.wake(key),
    onListening: () => void waiters.lookForMissed(),
    logger,
  });
  waiters.start();
  const version = cachedRendererVersion(() => liveRendererVersion(db, ALIVE_SECONDS));

  const leave = async (key: string) => {
    try {
      if (((await leaveRenderJob(db, key)) ?? 1) <= 0) await deleteUnwaitedRenderJob(db, key);
    } catch (err) {
      // The row stays until the renderers delete abandoned jobs: nothing waits on it.
      logger.warn({ err }, 'leaving a render job failed');
    }
  };

  async function render(tenant: string, job: EngineJob): Promise<EngineResult> {
    const rendererVersion = await version();
    if (!rendererVersion) return noRenderer;
    const key = renderJobKey(rendererVersion, tenant, job);
    const wait = waiters.wait(key, waitMs);
    let joined = false;
    try {
      const row = await joinRenderJob(db, { key, tenant, rendererVersion, spec: job });
      joined = true;
      if (row.status === 'done') return resultOfRow(row);
      if (!(await wait.done)) return notInTime(waitMs);
      return (await renderJobResult(db, key)) ?? notInTime(waitMs);
    } finally {
      wait.cancel();
      if (joined) await leave(key);
    }
  }

  return {
    version,
    render,
    async close() {
      waiters.stop();
      await listener.close();
    },
  };
}
