import type { Queryable } from '@brokkr/db';

/**
 * A job nobody waits for → deleted; by the api, after its leave brought `waiters` to 0. Whatever its
 * state: a result nobody reads is not kept, and a job still queued or at work is not worth rendering
 * (a renderer at work on it finds the row gone and writes nothing). `waiters <= 0` is checked again
 * here: a caller that joined in between (waiters back to 1) keeps the row.
 */
export async function deleteUnwaitedRenderJob(db: Queryable, key: string): Promise<void> {
  await db.query('DELETE FROM render_jobs WHERE job_key = $1 AND waiters <= 0', [key]);
}
