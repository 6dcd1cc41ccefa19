import type { Queryable } from '@brokkr/db';
import { AGENT_COLUMNS, type AgentRow } from '../../../domain/agent-row.ts';

export interface AgentChanges {
  name?: string;
  cluster_name?: string;
  status?: string;
}

/**
 * Only the given fields change; undefined when there is no live agent, or when `statusMustBe` is
 * given and the stored status differs (checked in the same statement, so a concurrent change by
 * an admin cannot slip between a check and the write).
 */
export async function updateAgent(tx: Queryable, id: string, changes: AgentChanges, statusMustBe?: string): Promise<AgentRow | undefined> {
  const { rows } = await tx.query<AgentRow>(
    `UPDATE agents SET name = COALESCE($2, name), cluster_name = COALESCE($3, cluster_name), status = COALESCE($4, status)
      WHERE id = $1 AND deleted_at IS NULL AND ($5::text IS NULL OR status = $5) RETURNING ${AGENT_COLUMNS}`,
    [id, changes.name ?? null, changes.cluster_name ?? null, changes.status ?? null, statusMustBe ?? null],
  );
  return rows[0];
}
