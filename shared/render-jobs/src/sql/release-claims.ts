import type { Queryable } from '@brokkr/db';
import { RENDER_JOBS_CHANNEL } from '../channels.ts';

/**
 * running → pending, for every job this renderer holds; by the renderer as it stops with renders it
 * could not finish (their processes were killed). Another renderer takes them at once instead of
 * after their leases, woken by the NOTIFY this statement sends. `claimed_by` fences it: a job whose
 * lease this renderer lost to another is not touched. The claim that was cut short is not counted
 * as an attempt.
 */
export async function releaseRenderClaims(db: Queryable, renderer: string): Promise<number> {
  const { rowCount } = await db.query(
    `WITH released AS (
       UPDATE render_jobs
          SET status = 'pending', acquired_until = NULL, claimed_by = NULL, attempts = attempts - 1
        WHERE claimed_by = $1 AND status = 'running'
       RETURNING renderer_version
     )
     SELECT pg_notify('${RENDER_JOBS_CHANNEL}', renderer_version) FROM released`,
    [renderer],
  );
  return rowCount ?? 0;
}
