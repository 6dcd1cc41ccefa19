import type { RolloutStatus } from '@brokkr/contracts';
import type { TaskClient } from '../queryable.ts';

export interface RolloutChange {
  status: RolloutStatus;
  releasedWave: number;
  waveStartedAt: Date | null;
  waveHealthySince: Date | null;
  message: string | null;
  finished: boolean;
  /** The wave the rollout now waits at for approvals; left out: it waits at none. */
  approvalWave?: number;
}

/**
 * The task's one write to a rollout row (it holds the row lock from lockActiveRollouts).
 * approval_requested_at says since when it waits for approvals (kept while it waits at the same wave).
 */
export async function updateRollout(db: TaskClient, id: string, change: RolloutChange): Promise<void> {
  await db.query(
    `UPDATE rollouts
        SET status = $2, released_wave = $3, wave_started_at = $4, wave_healthy_since = $5, message = $6,
            finished_at = CASE WHEN $7::boolean THEN now() ELSE finished_at END,
            approval_requested_at = CASE WHEN $8::int IS NULL THEN NULL
                                         WHEN approval_wave IS NOT DISTINCT FROM $8::int THEN approval_requested_at ELSE now() END,
            approval_wave = $8::int
      WHERE id = $1`,
    [
      id,
      change.status,
      change.releasedWave,
      change.waveStartedAt,
      change.waveHealthySince,
      change.message,
      change.finished,
      change.approvalWave ?? null,
    ],
  );
}
