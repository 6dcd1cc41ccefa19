import type { PreviewObjectResult } from '@brokkr/contracts';

/** A previews row (without the YAML, which only the agents fetch). */
export interface PreviewRow {
  id: string;
  stack_id: string;
  is_deletion_marker: boolean;
  created_by: string | null;
  created_at: Date;
  expires_at: Date;
}

export const PREVIEW_COLUMNS = 'p.id, p.stack_id, p.is_deletion_marker, p.created_by, p.created_at, p.expires_at';

/** A preview_agents row joined with its agent's names. */
export interface PreviewAgentRow {
  agent_id: string;
  agent_name: string | null;
  cluster_name: string | null;
  status: 'pending' | 'clean' | 'changes' | 'error';
  result: { objects: PreviewObjectResult[]; error: string | null } | null;
  reported_at: Date | null;
}

/** What an agent fetches: the preview with its YAML. */
export interface PendingPreviewRow extends PreviewRow {
  yaml_content: string;
}
