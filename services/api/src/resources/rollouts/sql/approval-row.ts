/** A rollout_approvals row as the api serves it (migration 0029); `counts` is computed when read. */
export interface ApprovalRow {
  id: string;
  rollout_id: string;
  wave: number;
  digest: string;
  approver_type: 'admin' | 'generator';
  approver_id: string | null;
  comment: string | null;
  created_at: Date;
  expires_at: Date;
  counts: boolean;
}

/** The columns, with `counts` against the rollout's current digest (brokkr_rollout_digest, one definition). */
export const APPROVAL_COLUMNS = `id, rollout_id, wave, digest, approver_type, approver_id, comment, created_at, expires_at,
  (expires_at > now() AND digest = brokkr_rollout_digest(rollout_id)) AS counts`;
