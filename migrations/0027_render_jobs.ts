import type { Knex } from 'knex';

// Charts and overlays are rendered by the `renderer` service, not by the api (docs/adr/0046): the
// api queues a render job here and waits for its result; a renderer claims it with a lease, renders
// it in a sandboxed process and writes the result. PostgreSQL's NOTIFY wakes each side (a renderer
// on `brokkr_render_jobs`, the waiting api on `brokkr_render_done`), delivered at commit with the row.
//
// render_jobs: one row per distinct job in flight. job_key is the hash of the renderer version, the
// tenant and the job, so identical jobs asked for at the same time (by two api replicas, or the
// submit and the render sweep) share one row and one render; `waiters` counts who waits on it, and
// the last one to leave deletes it. A job is claimed only by a renderer of the version its key was
// computed with (renderer_version), so a render is never stored under another renderer's key.
// A claim sets acquired_until (the lease, also the fencing token of the result write): a renderer
// killed mid-job leaves a lease that runs out, and the next claim takes the job back. The result
// (ok with yaml, or error and reason) lives on the row until the waiters have read it.
//
// renderers: the renderer processes alive, each refreshing last_seen while it runs and deleting its
// row when it stops, so the api knows without a round trip per render whether any renderer is
// there (503 renderer_unavailable at once when none is) and which version to key renders by.

const sql = `
CREATE TABLE render_jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  job_key text NOT NULL UNIQUE,
  tenant text NOT NULL,
  renderer_version text NOT NULL,
  job jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  waiters integer NOT NULL DEFAULT 1,
  attempts integer NOT NULL DEFAULT 0,
  claimed_by text,
  acquired_until timestamptz,
  ok boolean,
  yaml text,
  error text,
  reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT valid_render_job_status CHECK (status IN ('pending', 'running', 'done')),
  CONSTRAINT render_job_lease_while_running CHECK ((status = 'running') = (acquired_until IS NOT NULL)),
  CONSTRAINT render_job_result_when_done CHECK ((status = 'done') = (ok IS NOT NULL))
);
-- What a claim walks: the jobs of its version not yet done, oldest first (a partial index stays as
-- small as the queue).
CREATE INDEX idx_render_jobs_due ON render_jobs (renderer_version, created_at) WHERE status <> 'done';

CREATE TABLE renderers (
  id text PRIMARY KEY,
  version text NOT NULL,
  isolation jsonb NOT NULL,
  concurrency integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
