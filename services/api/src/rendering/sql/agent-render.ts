import type { Queryable } from '@brokkr/db';
import { agentsForOneStackSql } from '../../domain/agents-for-stacks.ts';

/** An agent's render of an object, as stored: its YAML (null: none yet, or it failed), the failure, the layers that applied. */
export interface StoredAgentRender {
  render_key: string | null;
  yaml_content: string | null;
  yaml_checksum: string | null;
  error: string | null;
  layers: string[];
  rendered_at: Date;
}

export async function storedAgentRender(db: Queryable, agentId: string, objectId: string): Promise<StoredAgentRender | undefined> {
  const { rows } = await db.query<StoredAgentRender>(
    `SELECT ar.render_key, r.yaml_content, r.yaml_checksum, ar.error, ar.layers, ar.rendered_at
       FROM agent_renders ar LEFT JOIN renders r ON r.key = ar.render_key
      WHERE ar.agent_id = $1 AND ar.deployment_object_id = $2`,
    [agentId, objectId],
  );
  return rows[0];
}

/** Whether the stack reaches the agent (the association rule). */
export async function stackReachesAgent(db: Queryable, stackId: string, agentId: string): Promise<boolean> {
  const { rows } = await db.query(`WITH ids AS (${agentsForOneStackSql('$1::uuid')}) SELECT 1 FROM ids WHERE id = $2 LIMIT 1`, [
    stackId,
    agentId,
  ]);
  return rows.length > 0;
}
