import type { Queryable } from '@brokkr/db';

/** Whether the target was there. */
export async function deleteTarget(tx: Queryable, agentId: string, stackId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_targets WHERE agent_id = $1 AND stack_id = $2', [agentId, stackId]);
  return (rowCount ?? 0) > 0;
}
