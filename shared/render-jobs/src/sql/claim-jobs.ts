import type { Queryable } from '@brokkr/db';
import type { RenderJobSpec } from '../job.ts';

export interface ClaimedRenderJob {
  id: string;
  job_key: string;
  tenant: string;
  job: RenderJobSpec;
  /** Claims of this job so far, this one included: above 1, an earlier claim's renderer was lost. */
  attempts: number;
  /** The claim's fencing token: acquired_until as PostgreSQL prints it (microseconds intact). */
  lease: string;
  /** From the job's queueing to this claim. */
  waited_seconds: number;
}

export interface ClaimOptions {
  /** This renderer's version: it claims only jobs keyed by it. */
  rendererVersion: string;
  /** This renderer process (renderers.id), recorded as claimed_by. */
  renderer: string;
  /** Free slots: jobs claimed at most. */
  limit: number;
  leaseSeconds: number;
}

/**
 * pending → running, or running (lease expired) → running; by the renderer. ONE statement
 * (UPDATE … WHERE id IN (… FOR UPDATE SKIP LOCKED LIMIT n)), fair between tenants:
 *  - `queue` is every job of this renderer version not done (the partial index idx_render_jobs_due:
 *    the queue, bounded by the api's waiters), each marked at work or due. A job at work whose
 *    lease ran out lost its renderer (killed mid-job) and is due again.
 *  - `ranked` gives each due job its tenant's turn: the tenant's jobs at work (on any renderer) plus
 *    its place among the tenant's due jobs. Ordered by turn, then age, the claim takes every
 *    tenant's next job before any tenant's one after it, so a tenant's burst of renders waits behind
 *    itself, as @brokkr/render's FairQueue does inside one process.
 *  - `picked` locks at most `limit` of them, FOR UPDATE SKIP LOCKED: a job another renderer is
 *    claiming right now is skipped, and one claimed and committed since `queue` read it is checked
 *    again against the WHERE and dropped.
 * Nothing stays locked after the statement: ownership is the lease (acquired_until), which covers
 * the render's wall-clock limit and the writes around it (timing.ts); the result write is fenced on
 * it (record-result.ts), so a renderer that lost its claim writes nothing.
 */
const CLAIM_SQL = `WITH queue AS (
       SELECT id, tenant, created_at, (status = 'running' AND acquired_until >= now()) AS at_work
         FROM render_jobs
        WHERE renderer_version = $1 AND status <> 'done'
     ), ranked AS (
       SELECT id, at_work, created_at,
              count(*) FILTER (WHERE at_work) OVER (PARTITION BY tenant)
                + row_number() OVER (PARTITION BY tenant, at_work ORDER BY created_at) AS turn
         FROM queue
     ), picked AS (
       SELECT j.id
         FROM ranked r
         JOIN render_jobs j ON j.id = r.id
        WHERE NOT r.at_work
          AND (j.status = 'pending' OR (j.status = 'running' AND j.acquired_until < now()))
        ORDER BY r.turn, r.created_at
        LIMIT $2
          FOR UPDATE OF j SKIP LOCKED
     )
     UPDATE render_jobs j
        SET status = 'running', attempts = j.attempts + 1, claimed_by = $3,
            acquired_until = now() + make_interval(secs => $4)
       FROM picked
      WHERE j.id = picked.id
  RETURNING j.id, j.job_key, j.tenant, j.job, j.attempts, j.acquired_until::text AS lease,
            extract(epoch FROM now() - j.created_at)::float8 AS waited_seconds`;

export async function claimRenderJobs(db: Queryable, options: ClaimOptions): Promise<ClaimedRenderJob[]> {
  if (options.limit <= 0) return [];
  const { rows } = await db.query<ClaimedRenderJob>({
    name: 'render-jobs-claim',
    text: CLAIM_SQL,
    values: [options.rendererVersion, options.limit, options.renderer, options.leaseSeconds],
  });
  return rows;
}
