import type { Queryable } from '@brokkr/db';
import { RENDER_JOBS_CHANNEL } from '../channels.ts';
import type { RenderJobSpec } from '../job.ts';

export interface JoinedJob {
  status: 'pending' | 'running' | 'done';
  ok: boolean | null;
  yaml: string | null;
  error: string | null;
  reason: string | null;
}

/**
 * (none) → pending, or one more waiter on the job already there; by the api.
 * ONE statement: the insert, or — when an identical job (same key) is queued, at work or done but
 * not yet collected — `waiters + 1` on that row, so the two callers share one render and the row
 * stays until both have left (leave-job.ts). A done row answers at once with its result. A job not
 * yet done wakes the renderers of its version with a NOTIFY sent by the same statement, so it is
 * delivered when the row commits, never before it and never for a row that does not exist.
 */
const JOIN_SQL = `WITH joined AS (
       INSERT INTO render_jobs (job_key, tenant, renderer_version, job)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (job_key) DO UPDATE SET waiters = render_jobs.waiters + 1
       RETURNING status, ok, yaml, error, reason
     )
     SELECT j.status, j.ok, j.yaml, j.error, j.reason
       FROM joined j
       LEFT JOIN LATERAL (SELECT pg_notify('${RENDER_JOBS_CHANNEL}', $3) WHERE j.status <> 'done') wake ON true`;

export async function joinRenderJob(
  db: Queryable,
  job: { key: string; tenant: string; rendererVersion: string; spec: RenderJobSpec },
): Promise<JoinedJob> {
  const { rows } = await db.query<JoinedJob>(JOIN_SQL, [job.key, job.tenant, job.rendererVersion, JSON.stringify(job.spec)]);
  return rows[0]!;
}
