import type { Queryable } from '@brokkr/db';
import type { AgentLabelRow } from './queries.ts';

/** Unknown agent → FK violation (422); duplicate → unique violation `agent_labels_agent_id_label_key` (409). */
export async function insertLabel(tx: Queryable, agentId: string, label: string): Promise<AgentLabelRow> {
  const { rows } = await tx.query<AgentLabelRow>(
    'INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2) RETURNING id, agent_id, label',
    [agentId, label],
  );
  return rows[0]!;
}
