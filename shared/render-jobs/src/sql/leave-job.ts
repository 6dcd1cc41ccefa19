import type { Queryable } from '@brokkr/db';

/**
 * One waiter fewer on a job (it read the result, or gave up waiting); by the api. Returns how many
 * still wait (undefined: the row is gone). The caller that brings it to 0 deletes the row
 * (delete-unwaited-job.ts): a second statement, since one statement cannot update and delete the
 * same row.
 */
export async function leaveRenderJob(db: Queryable, key: string): Promise<number | undefined> {
  const { rows } = await db.query<{ waiters: number }>(
    'UPDATE render_jobs SET waiters = waiters - 1 WHERE job_key = $1 RETURNING waiters',
    [key],
  );
  return rows[0]?.waiters;
}
