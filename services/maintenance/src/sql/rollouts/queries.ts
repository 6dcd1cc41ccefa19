import type { RolloutPolicy, RolloutStatus } from '@brokkr/contracts';
import type { AgentReport } from '../../rollouts/gate.ts';
import type { TargetedAgent } from '../../rollouts/assign-waves.ts';
import type { TaskClient } from '../queryable.ts';

export interface RolloutRow {
  id: string;
  stack_id: string;
  deployment_object_id: string;
  baseline_object_id: string;
  policy: RolloutPolicy;
  status: RolloutStatus;
  released_wave: number;
  /** The wave the rollout waits at for approvals (migration 0029), or null. */
  approval_wave: number | null;
  wave_started_at: Date | null;
  wave_healthy_since: Date | null;
}

/**
 * The rollouts the task moves on (pending, progressing), locked for this transaction. SKIP
 * LOCKED: a rollout the api is pausing or aborting right now is simply looked at next tick.
 */
export async function lockActiveRollouts(db: TaskClient, limit: number): Promise<RolloutRow[]> {
  const { rows } = await db.query<RolloutRow>(
    `SELECT id, stack_id, deployment_object_id, baseline_object_id, policy, status, released_wave, approval_wave,
            wave_started_at, wave_healthy_since
       FROM rollouts WHERE status IN ('pending', 'progressing')
      ORDER BY created_at LIMIT $1
      FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows;
}

/**
 * The ACTIVE agents associated with the stack now (brokkr_stack_agents, migration 0014: same rule
 * as services/api/src/domain/association.ts), with their labels.
 */
export async function stackAgents(db: TaskClient, stackId: string): Promise<TargetedAgent[]> {
  const { rows } = await db.query<TargetedAgent>(
    `SELECT sa.agent_id AS id, coalesce(array_agg(al.label) FILTER (WHERE al.label IS NOT NULL), '{}') AS labels
       FROM brokkr_stack_agents($1) sa
       LEFT JOIN agent_labels al ON al.agent_id = sa.agent_id
      GROUP BY sa.agent_id`,
    [stackId],
  );
  return rows;
}

/** Every agent of the rollout with what it last reported for the rollout's object. */
export async function agentReports(db: TaskClient, rolloutId: string, objectId: string): Promise<AgentReport[]> {
  const { rows } = await db.query<AgentReport>(
    `SELECT ra.agent_id AS "agentId", ra.wave,
            (SELECT upper(e.status) FROM agent_events e
              WHERE e.agent_id = ra.agent_id AND e.deployment_object_id = $2 AND e.deleted_at IS NULL
              ORDER BY e.created_at DESC LIMIT 1) AS "lastEvent",
            (SELECT h.status FROM deployment_health h WHERE h.agent_id = ra.agent_id AND h.deployment_object_id = $2) AS health
       FROM rollout_agents ra WHERE ra.rollout_id = $1`,
    [rolloutId, objectId],
  );
  return rows;
}

export interface WaveApprovals {
  /** What the wave would ship now: brokkr_rollout_digest (migration 0029), the api's definition too. */
  digest: string;
  /** Unexpired approvals of that digest. */
  approvals: number;
}

export async function waveApprovals(db: TaskClient, rolloutId: string, wave: number): Promise<WaveApprovals> {
  const { rows } = await db.query<WaveApprovals>(
    'SELECT brokkr_rollout_digest($1) AS digest, brokkr_rollout_approvals($1, $2) AS approvals',
    [rolloutId, wave],
  );
  return rows[0]!;
}
