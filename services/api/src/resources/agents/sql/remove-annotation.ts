import type { Queryable } from '@brokkr/db';

/** Whether the annotation was there. */
export async function deleteAnnotation(tx: Queryable, agentId: string, key: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_annotations WHERE agent_id = $1 AND key = $2', [agentId, key]);
  return (rowCount ?? 0) > 0;
}
