import type { Queryable } from '@brokkr/db';
import { agentIsActive } from '../../../domain/active-agent.ts';
import { PREVIEW_COLUMNS, type PendingPreviewRow, type PreviewAgentRow, type PreviewRow } from './preview-row.ts';

/** The read-only statements of previews. */

export async function findPreview(db: Queryable, id: string): Promise<PreviewRow | undefined> {
  const { rows } = await db.query<PreviewRow>(`SELECT ${PREVIEW_COLUMNS} FROM previews p WHERE p.id = $1`, [id]);
  return rows[0];
}

/** Every targeted agent's row, with the agent's names (a hard-deleted agent takes its row with it). */
export async function listPreviewAgents(db: Queryable, previewId: string): Promise<PreviewAgentRow[]> {
  const { rows } = await db.query<PreviewAgentRow>(
    `SELECT pa.agent_id, a.name AS agent_name, a.cluster_name, pa.status, pa.result, pa.reported_at
       FROM preview_agents pa LEFT JOIN agents a ON a.id = pa.agent_id
      WHERE pa.preview_id = $1
      ORDER BY a.name, pa.agent_id`,
    [previewId],
  );
  return rows;
}

/** Per preview of a stack, newest first: the row and its agents' statuses (no objects). */
export async function listStackPreviews(
  db: Queryable,
  stackId: string,
  limit: number,
): Promise<(PreviewRow & { statuses: PreviewAgentRow['status'][] | null })[]> {
  const { rows } = await db.query<PreviewRow & { statuses: PreviewAgentRow['status'][] | null }>(
    `SELECT ${PREVIEW_COLUMNS},
            (SELECT array_agg(pa.status::text) FROM preview_agents pa WHERE pa.preview_id = p.id) AS statuses
       FROM previews p WHERE p.stack_id = $1
      ORDER BY p.created_at DESC, p.id
      LIMIT $2`,
    [stackId, limit],
  );
  return rows;
}

/**
 * The agent's previews still to run: not yet reported, not expired, stack not deleted since; oldest
 * first. None while the agent is not ACTIVE (deactivated after the preview asked it).
 */
export async function listPendingPreviews(db: Queryable, agentId: string): Promise<PendingPreviewRow[]> {
  const { rows } = await db.query<PendingPreviewRow>(
    `SELECT ${PREVIEW_COLUMNS}, p.yaml_content
       FROM preview_agents pa
       JOIN previews p ON p.id = pa.preview_id
       JOIN stacks s ON s.id = p.stack_id AND s.deleted_at IS NULL
      WHERE pa.agent_id = $1 AND pa.status = 'pending' AND p.expires_at > now() AND ${agentIsActive('$1::uuid')}
      ORDER BY p.created_at, p.id`,
    [agentId],
  );
  return rows;
}

/** Whether the agent was targeted by the preview (and so may report on it). */
export async function isPreviewAgent(db: Queryable, previewId: string, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM preview_agents WHERE preview_id = $1 AND agent_id = $2', [previewId, agentId]);
  return (rowCount ?? 0) > 0;
}

/** Of these agents, the live ACTIVE ones (the only ones that run previews). */
export async function activeAgents(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND status = 'ACTIVE' AND deleted_at IS NULL ORDER BY id`,
    [ids],
  );
  return rows.map((r) => r.id);
}
