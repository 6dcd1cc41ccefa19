import type { Queryable } from '@brokkr/db';
import type { AgentTargetRow } from './queries.ts';

/** The caller has checked the stack, its owner and the agent's registration (authorizeTargeting). */
export async function insertTarget(tx: Queryable, agentId: string, stackId: string): Promise<AgentTargetRow> {
  const { rows } = await tx.query<AgentTargetRow>(
    'INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2) RETURNING id, agent_id, stack_id',
    [agentId, stackId],
  );
  return rows[0]!;
}
