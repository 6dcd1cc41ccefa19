import type { Queryable } from '@brokkr/db';
import { RENDER_DONE_CHANNEL } from '../channels.ts';
import type { RenderJobResult } from '../job.ts';

/**
 * running → done with the result; by the renderer. ONE statement, fenced on the claim (id and the
 * lease it was given): a renderer whose lease ran out and whose job was claimed again, or whose job
 * was deleted because nobody waits for it any more, writes nothing and learns so (false). The
 * NOTIFY to the waiting api replicas is sent by the same statement, only when the write landed, and
 * delivered at its commit: a waiter woken by it finds the result.
 */
const RECORD_SQL = `WITH done AS (
       UPDATE render_jobs
          SET status = 'done', ok = $3, yaml = $4, error = $5, reason = $6, finished_at = now(), acquired_until = NULL
        WHERE id = $1 AND status = 'running' AND acquired_until = $2::timestamptz
       RETURNING job_key
     )
     SELECT pg_notify('${RENDER_DONE_CHANNEL}', job_key) FROM done`;

export async function recordRenderResult(db: Queryable, claim: { id: string; lease: string }, result: RenderJobResult): Promise<boolean> {
  const values = result.ok
    ? [claim.id, claim.lease, true, result.yaml, null, null]
    : [claim.id, claim.lease, false, null, result.error, result.reason];
  const { rowCount } = await db.query({ name: 'render-jobs-record-result', text: RECORD_SQL, values });
  return rowCount === 1;
}
