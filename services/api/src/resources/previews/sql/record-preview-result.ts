import type { Queryable } from '@brokkr/db';

export type PreviewVerdict = 'clean' | 'changes' | 'error';

export interface AfterReport {
  stackId: string;
  /** Targeted agents still pending after this report. */
  pending: number;
  /** Every targeted agent's status after this report. */
  statuses: ('pending' | PreviewVerdict)[];
}

/**
 * The agent's one result: a compare-and-set from `pending`, so a second report (a retried POST,
 * a second process with the agent's identity) changes nothing and the caller answers 409. A
 * report after the preview expired is refused the same way (the agent shows `expired`). Call it
 * in a transaction: it locks the preview row first, so concurrent reports on one preview are
 * counted one after the other. Undefined when nothing was stored.
 */
export async function recordPreviewResult(
  db: Queryable,
  report: { previewId: string; agentId: string; verdict: PreviewVerdict; result: unknown },
): Promise<AfterReport | undefined> {
  const { previewId, agentId, verdict, result } = report;
  const { rows: locked } = await db.query<{ stack_id: string }>(
    'SELECT stack_id FROM previews WHERE id = $1 AND expires_at > now() FOR UPDATE',
    [previewId],
  );
  if (!locked[0]) return undefined;
  const { rowCount } = await db.query(
    `UPDATE preview_agents SET status = $3, result = $4::jsonb, reported_at = now()
      WHERE preview_id = $1 AND agent_id = $2 AND status = 'pending'`,
    [previewId, agentId, verdict, JSON.stringify(result)],
  );
  if ((rowCount ?? 0) === 0) return undefined;
  const { rows } = await db.query<{ status: AfterReport['statuses'][number] }>('SELECT status FROM preview_agents WHERE preview_id = $1', [
    previewId,
  ]);
  const statuses = rows.map((r) => r.status);
  return { stackId: locked[0].stack_id, pending: statuses.filter((s) => s === 'pending').length, statuses };
}
