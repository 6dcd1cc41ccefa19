import type { RolloutRow } from './sql/rollout-row.ts';
import type { ApprovalCount, WaveCounts } from './sql/queries.ts';

/** The Rollout resource: the row plus one status line per wave of its policy (with its approvals when they are read). */
export function rolloutJson(row: RolloutRow, counts: readonly WaveCounts[], approvals: readonly ApprovalCount[] = []) {
  const waves = row.policy.waves.map((wave, index) => {
    const c = counts.find((x) => x.rollout_id === row.id && x.wave === index);
    return {
      index,
      name: wave.name,
      released: index <= row.released_wave,
      agents: c?.agents ?? 0,
      applied: c?.applied ?? 0,
      healthy: c?.healthy ?? 0,
      failed: c?.failed ?? 0,
      // Policies stored before approvals existed have no such field: no approval needed.
      required_approvals: wave.required_approvals ?? 0,
      approvals: approvals.find((x) => x.rollout_id === row.id && x.wave === index)?.approvals ?? 0,
      awaiting_approval: row.approval_wave === index,
    };
  });
  return { ...row, waves };
}
