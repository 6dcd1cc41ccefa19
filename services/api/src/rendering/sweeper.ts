import type pg from 'pg';
import { withAdvisoryLock } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { sweepRenders, type SweepDeps } from './sweep.ts';

export interface RenderSweeper {
  /** Sweeps within a moment (an agent's associations, labels or cluster may have changed); coalesced. */
  soon(): void;
  start(): void;
  stop(): Promise<void>;
}

const SOON_MS = 250;

/**
 * Keeps every agent's render of the objects rendered per agent current (sweep.ts), every
 * `intervalMs` and soon after a change that may call for it. One replica sweeps at a time: the
 * others find the advisory lock taken and skip (a crashed one's session, and so its lock, ends).
 */
export function createRenderSweeper(
  deps: SweepDeps & { pool: pg.Pool; lockName: string; intervalMs: number; logger: Logger },
): RenderSweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, ms).unref();
  };

  const sweepOnce = async () => {
    try {
      const outcome = await withAdvisoryLock(deps.pool, deps.lockName, () => sweepRenders(deps));
      if (outcome.acquired && (outcome.value.rendered > 0 || outcome.value.failed > 0)) deps.logger.info(outcome.value, 'renders swept');
    } catch (err) {
      deps.logger.warn({ err }, 'render sweep failed; it runs again');
    }
  };

  function run() {
    if (running) {
      again = true;
      return;
    }
    running = sweepOnce().finally(() => {
      running = undefined;
      schedule(again ? SOON_MS : deps.intervalMs);
      again = false;
    });
  }

  return {
    soon() {
      if (running) again = true;
      else schedule(SOON_MS);
    },
    start() {
      stopped = false;
      schedule(SOON_MS);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
