import type pg from 'pg';
import type { Logger } from '@brokkr/logger';
import type { Transact } from '../events/transact.ts';
import type { Engine, RenderDeps } from './render.ts';
import { createRenderSweeper, type RenderSweeper } from './sweeper.ts';

/** What the api renders with: the engine (when installed), the source store, and the sweeper that keeps agents' renders current. */
export interface Rendering extends RenderDeps {
  sweeper: RenderSweeper;
}

export interface RenderingParts {
  pool: pg.Pool;
  engine: Engine;
  counts: RenderDeps['counts'];
  transact: Transact;
  logger: Logger;
  /** The advisory lock's name: one sweeper at a time per database schema. */
  lockName: string;
  sweepIntervalMs: number;
}

export function createRendering(parts: RenderingParts): Rendering {
  const deps = { engine: parts.engine, counts: parts.counts };
  const sweeper = createRenderSweeper({
    ...deps,
    db: parts.pool,
    pool: parts.pool,
    transact: parts.transact,
    lockName: parts.lockName,
    intervalMs: parts.sweepIntervalMs,
    swept: new Map(),
    logger: parts.logger.child({ component: 'render-sweep' }),
  });
  return { ...deps, sweeper };
}
