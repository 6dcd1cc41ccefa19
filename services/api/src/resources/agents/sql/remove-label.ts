import type { Queryable } from '@brokkr/db';

/** Whether the label was there. */
export async function deleteLabel(tx: Queryable, agentId: string, label: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_labels WHERE agent_id = $1 AND label = $2', [agentId, label]);
  return (rowCount ?? 0) > 0;
}
