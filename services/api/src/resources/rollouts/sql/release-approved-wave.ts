import type { Queryable } from '@brokkr/db';
import { ROLLOUT_COLUMNS, type RolloutRow } from './rollout-row.ts';

/**
 * The approval that completes a wave's count releases it at once, in its own transaction: the
 * same change as the rollouts task's "next wave" (maintenance's update-rollout.ts), only from a
 * progressing rollout that waits at exactly this wave (approval_wave, set by that task once every
 * gate before the wave passed). Undefined when it does not wait there (paused, not reached yet:
 * the task releases it when it gets there, the approvals being counted).
 */
export async function releaseApprovedWave(db: Queryable, id: string, wave: number): Promise<RolloutRow | undefined> {
  const { rows } = await db.query<RolloutRow>(
    `UPDATE rollouts
        SET released_wave = $2, approval_wave = NULL, wave_started_at = now(), wave_healthy_since = NULL, message = NULL
      WHERE id = $1 AND status = 'progressing' AND approval_wave = $2
      RETURNING ${ROLLOUT_COLUMNS}`,
    [id, wave],
  );
  return rows[0];
}
