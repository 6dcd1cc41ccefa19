import type { Queryable } from '@brokkr/db';

export type PreviewVerdict = 'clean' | 'changes' | 'error';

/**
 * The agent's one result: a compare-and-set from `pending`, so a second report (a retried POST,
 * a second process with the agent's identity) changes nothing and the caller answers 409. A
 * report after the preview expired is refused the same way (the agent shows `expired`).
 * True when this call stored the result.
 */
export async function recordPreviewResult(
  db: Queryable,
  report: { previewId: string; agentId: string; verdict: PreviewVerdict; result: unknown },
): Promise<boolean> {
  const { previewId, agentId, verdict, result } = report;
  const { rowCount } = await db.query(
    `UPDATE preview_agents pa SET status = $3, result = $4::jsonb, reported_at = now()
       FROM previews p
      WHERE pa.preview_id = $1 AND pa.agent_id = $2 AND pa.status = 'pending'
        AND p.id = pa.preview_id AND p.expires_at > now()`,
    [previewId, agentId, verdict, JSON.stringify(result)],
  );
  return (rowCount ?? 0) > 0;
}
