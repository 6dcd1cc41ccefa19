import type { Queryable } from '@brokkr/db';
import { APPROVAL_COLUMNS, type ApprovalRow } from './approval-row.ts';

export interface NewApproval {
  rolloutId: string;
  wave: number;
  digest: string;
  approverType: 'admin' | 'generator';
  approverId: string | null;
  comment: string | null;
  ttlSeconds: number;
}

/**
 * One approval per approver, wave and digest: approving again renews it (a new expiry and comment)
 * rather than counting twice. The digest is the one the caller read under the rollout's row lock.
 */
export async function recordApproval(db: Queryable, a: NewApproval): Promise<ApprovalRow> {
  const { rows } = await db.query<ApprovalRow>(
    `INSERT INTO rollout_approvals (rollout_id, wave, digest, approver_type, approver_id, approver, comment, expires_at)
     VALUES ($1, $2, $3, $4, $5::uuid, $8, $6, now() + make_interval(secs => $7::int))
     ON CONFLICT (rollout_id, wave, digest, approver)
       DO UPDATE SET comment = EXCLUDED.comment, created_at = now(), expires_at = EXCLUDED.expires_at
     RETURNING ${APPROVAL_COLUMNS}`,
    [a.rolloutId, a.wave, a.digest, a.approverType, a.approverId, a.comment, a.ttlSeconds, a.approverId ?? 'admin'],
  );
  return rows[0]!;
}
