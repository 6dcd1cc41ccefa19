import type { RolloutWave } from '@brokkr/contracts';
import type { Identity } from '../../auth/identity.ts';

/** A wave's approval rule; policies stored before approvals existed lack the fields (none needed). */
export function approvalRule(wave: RolloutWave): { required: number; approvers: readonly string[]; ttlSeconds: number } {
  const stored: Partial<RolloutWave> = wave;
  return { required: stored.required_approvals ?? 0, approvers: stored.approvers ?? [], ttlSeconds: stored.approval_ttl_seconds ?? 86_400 };
}

/** How an approver is named in rollout_approvals.approver and deployment_objects.submitted_by. */
export function approverName(identity: Identity): string | null {
  return identity.admin ? 'admin' : identity.generator;
}

/**
 * Why this identity may not approve a wave of an object `submitter` submitted, or null when it may.
 * The submitter never may (an admin that submitted included: four eyes, not two hands of one role);
 * otherwise an admin always may, a generator only when the wave lists it, an agent never.
 */
export function approvalRefusal(identity: Identity, approvers: readonly string[], submitter: string): 'submitter' | 'not_approver' | null {
  const name = approverName(identity);
  if (name === null) return 'not_approver';
  if (name === submitter) return 'submitter';
  if (identity.admin) return null;
  return approvers.includes(name) ? null : 'not_approver';
}

/** The waves not released yet that lack approvals (counts: the approvals that count, per wave). */
export function unapprovedWaves(
  waves: readonly RolloutWave[],
  releasedWave: number,
  counts: readonly { wave: number; approvals: number }[],
): number[] {
  return waves.flatMap((wave, index) => {
    if (index <= releasedWave) return [];
    const counted = counts.find((c) => c.wave === index)?.approvals ?? 0;
    return counted < approvalRule(wave).required ? [index] : [];
  });
}
