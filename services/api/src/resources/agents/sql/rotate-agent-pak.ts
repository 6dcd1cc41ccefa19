import type { Queryable } from '@brokkr/db';
import { A_COLUMNS, type AgentRow } from '../../../domain/agent-row.ts';

/** Swaps the PAK hash; returns the agent and the hash that must stop working. */
export async function rotateAgentPak(
  tx: Queryable,
  id: string,
  newHash: string,
): Promise<{ agent: AgentRow; oldHash: string } | undefined> {
  const { rows } = await tx.query<AgentRow & { old_hash: string }>(
    `WITH old AS (SELECT id, pak_hash FROM agents WHERE id = $1 AND deleted_at IS NULL FOR UPDATE)
     UPDATE agents a SET pak_hash = $2 FROM old WHERE a.id = old.id
     RETURNING ${A_COLUMNS}, old.pak_hash AS old_hash`,
    [id, newHash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { old_hash: oldHash, ...agent } = row;
  return { agent, oldHash };
}
