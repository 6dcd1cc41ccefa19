import type { Queryable } from '@brokkr/db';
import type { RenderJobResult } from '../job.ts';

/**
 * The version of the renderer started last among those alive (seen within `aliveSeconds`), or
 * undefined when none is. During a rolling upgrade two versions are alive: jobs are keyed by the
 * newer one, which its renderers claim, while the old ones finish what they hold.
 */
export async function liveRendererVersion(db: Queryable, aliveSeconds: number): Promise<string | undefined> {
  const { rows } = await db.query<{ version: string }>({
    name: 'render-jobs-live-version',
    text: 'SELECT version FROM renderers WHERE last_seen > now() - make_interval(secs => $1) ORDER BY started_at DESC LIMIT 1',
    values: [aliveSeconds],
  });
  return rows[0]?.version;
}

/** Which of these jobs are done (for waiters whose wake-up may have been lost). */
export async function doneRenderJobKeys(db: Queryable, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ job_key: string }>(
    "SELECT job_key FROM render_jobs WHERE job_key = ANY($1::text[]) AND status = 'done'",
    [keys],
  );
  return rows.map((r) => r.job_key);
}

/** A done job's result; undefined while it is not done (or gone). */
export async function renderJobResult(db: Queryable, key: string): Promise<RenderJobResult | undefined> {
  const { rows } = await db.query<{ ok: boolean; yaml: string | null; error: string | null; reason: string | null }>(
    "SELECT ok, yaml, error, reason FROM render_jobs WHERE job_key = $1 AND status = 'done'",
    [key],
  );
  return rows[0] && resultOfRow(rows[0]);
}

/** A result as stored (ok with yaml, or error and reason) back into its union. */
export function resultOfRow(row: {
  ok: boolean | null;
  yaml: string | null;
  error: string | null;
  reason: string | null;
}): RenderJobResult {
  return row.ok
    ? { ok: true, yaml: row.yaml ?? '' }
    : { ok: false, error: row.error ?? 'the render failed', reason: row.reason ?? 'invalid' };
}

export interface RenderQueueDepth {
  pending: number;
  running: number;
  /** Age of the oldest job no renderer holds (0 when none waits). */
  oldestPendingSeconds: number;
}

/** The queue as every renderer sees it (all versions), for the renderer's gauges. */
export async function renderQueueDepth(db: Queryable): Promise<RenderQueueDepth> {
  const { rows } = await db.query<{ pending: number; running: number; oldest: number | null }>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
            count(*) FILTER (WHERE status = 'running')::int AS running,
            extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'pending'))::float8 AS oldest
       FROM render_jobs
      WHERE status <> 'done'`,
  );
  const row = rows[0]!;
  return { pending: row.pending, running: row.running, oldestPendingSeconds: row.oldest ?? 0 };
}
