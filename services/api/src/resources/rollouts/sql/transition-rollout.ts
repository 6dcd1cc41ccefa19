import type { Queryable } from '@brokkr/db';
import type { RolloutStatus } from '@brokkr/contracts';
import { ROLLOUT_COLUMNS, type RolloutRow } from './rollout-row.ts';

/**
 * An operator's transition (pause, resume, abort, promote): the new status, only from the given
 * ones. Resuming restarts the wave's progress deadline and soak. Undefined when the rollout is not
 * in one of `from` (another transition or the rollouts task got there first).
 */
export async function transitionRollout(
  db: Queryable,
  id: string,
  change: { from: readonly RolloutStatus[]; to: RolloutStatus; message: string },
): Promise<RolloutRow | undefined> {
  const { from, to, message } = change;
  const finished = to === 'aborted' || to === 'promoted';
  const { rows } = await db.query<RolloutRow>(
    `UPDATE rollouts
        SET status = $3::varchar, message = $4,
            wave_started_at = CASE WHEN $3::varchar = 'progressing' THEN now() ELSE wave_started_at END,
            wave_healthy_since = CASE WHEN $3::varchar = 'progressing' THEN NULL ELSE wave_healthy_since END,
            finished_at = CASE WHEN $5::boolean THEN now() ELSE finished_at END
      WHERE id = $1 AND status = ANY($2::text[])
      RETURNING ${ROLLOUT_COLUMNS}`,
    [id, from, to, message, finished],
  );
  return rows[0];
}
