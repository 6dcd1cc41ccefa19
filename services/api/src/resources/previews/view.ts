import type { Preview, PreviewAgentResult, PreviewAgentStatus, PreviewSummary } from '@brokkr/contracts';
import type { PreviewAgentRow, PreviewRow } from './sql/preview-row.ts';

/** An agent still `pending` once the preview expired will never report: it shows `expired`. */
function effectiveStatus(status: PreviewAgentRow['status'], expired: boolean): PreviewAgentStatus {
  return status === 'pending' && expired ? 'expired' : status;
}

/** How many targeted agents are in each status. */
export function previewCounts(statuses: readonly PreviewAgentStatus[]): PreviewSummary['counts'] {
  const counts = { agents: statuses.length, pending: 0, clean: 0, changes: 0, error: 0, expired: 0 };
  for (const status of statuses) counts[status]++;
  return counts;
}

function summarize(row: PreviewRow, statuses: readonly PreviewAgentStatus[]): PreviewSummary {
  const counts = previewCounts(statuses);
  return {
    id: row.id,
    stack_id: row.stack_id,
    is_deletion_marker: row.is_deletion_marker,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    status: counts.pending > 0 ? 'pending' : 'completed',
    counts,
  };
}

const isExpired = (row: PreviewRow, now: Date) => row.expires_at.getTime() <= now.getTime();

/** A preview with its counts only (the stack's list). */
export function previewSummary(row: PreviewRow, statuses: readonly PreviewAgentRow['status'][], now = new Date()): PreviewSummary {
  return summarize(
    row,
    statuses.map((s) => effectiveStatus(s, isExpired(row, now))),
  );
}

/** A preview aggregated per agent: each targeted agent's verdict and per-object result. */
export function previewView(row: PreviewRow, agents: readonly PreviewAgentRow[], now = new Date()): Preview {
  const expired = isExpired(row, now);
  const perAgent: PreviewAgentResult[] = agents.map((a) => ({
    agent_id: a.agent_id,
    agent_name: a.agent_name,
    cluster_name: a.cluster_name,
    status: effectiveStatus(a.status, expired),
    reported_at: a.reported_at?.toISOString() ?? null,
    error: a.result?.error ?? null,
    objects: a.result?.objects ?? [],
  }));
  return {
    ...summarize(
      row,
      perAgent.map((a) => a.status),
    ),
    agents: perAgent,
  };
}
