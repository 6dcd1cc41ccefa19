import type { Queryable } from '@brokkr/db';
import type { AgentAnnotationRow } from './queries.ts';

/** One value per key; unknown agent → FK violation (422), duplicate key → unique violation (409). */
export async function insertAnnotation(tx: Queryable, agentId: string, key: string, value: string): Promise<AgentAnnotationRow> {
  const { rows } = await tx.query<AgentAnnotationRow>(
    'INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3) RETURNING id, agent_id, key, value',
    [agentId, key, value],
  );
  return rows[0]!;
}
