import { PREVIEW_LIMITS } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { PREVIEW_COLUMNS, type PreviewRow } from './preview-row.ts';

export interface NewPreview {
  stackId: string;
  yamlContent: string;
  isDeletionMarker: boolean;
  createdBy: string;
  agentIds: readonly string[];
}

/**
 * The preview and one `pending` row per targeted agent, in one statement: the set of agents is
 * fixed here (an agent that gains the stack later is not asked), so "every agent reported" has a
 * definite meaning.
 */
export async function insertPreview(db: Queryable, input: NewPreview): Promise<PreviewRow> {
  const { rows } = await db.query<PreviewRow>(
    `WITH p AS (
       INSERT INTO previews (stack_id, yaml_content, is_deletion_marker, created_by, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(mins => $5))
       RETURNING *
     ), targeted AS (
       INSERT INTO preview_agents (preview_id, agent_id)
       SELECT p.id, a.id FROM p CROSS JOIN unnest($6::uuid[]) AS a(id)
     )
     SELECT ${PREVIEW_COLUMNS} FROM p`,
    [input.stackId, input.yamlContent, input.isDeletionMarker, input.createdBy, PREVIEW_LIMITS.ttlMinutes, input.agentIds],
  );
  return rows[0]!;
}
