import type { Queryable } from '@brokkr/db';
import { ABANDONED_AFTER_SECONDS, ABANDONED_BATCH } from '../timing.ts';

/**
 * Any state → deleted, for jobs older than anyone waits (timing.ts); by the renderer's periodic
 * tick. Only an api that died while it waited leaves such a row behind (a live one deletes its
 * rows as it leaves). Idempotent, so every renderer replica may run it; at most a batch per tick.
 */
export async function deleteAbandonedRenderJobs(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM render_jobs
      WHERE id IN (SELECT id FROM render_jobs WHERE created_at < now() - make_interval(secs => $1) LIMIT $2)`,
    [ABANDONED_AFTER_SECONDS, ABANDONED_BATCH],
  );
  return rowCount ?? 0;
}
