/**
 * Progressive rollouts (ADR 0016): whether rollout `r` of a stack's newest object still holds agent
 * `agent` on the rollout's baseline. Everyone is held while the rollout is pending (waves not
 * assigned yet), rolled back or aborted; while it progresses, is paused or failed without rollback,
 * only the agents of waves not released yet (a wave waiting for approvals is not released). The
 * target state serves by this rule and the status answer explains by it.
 */
export function rolloutHoldsSql(r: string, agent: string): string {
  return `(${r}.status IN ('pending', 'rolled_back', 'aborted')
           OR (${r}.status IN ('progressing', 'paused', 'failed') AND NOT EXISTS (
                 SELECT 1 FROM rollout_agents ra
                  WHERE ra.rollout_id = ${r}.id AND ra.agent_id = ${agent} AND ra.wave <= ${r}.released_wave)))`;
}
