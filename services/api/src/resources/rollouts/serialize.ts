import type { RolloutRow } from './sql/rollout-row.ts';
import type { WaveCounts } from './sql/queries.ts';

/** The Rollout resource: the row plus one status line per wave of its policy. */
export function rolloutJson(row: RolloutRow, counts: readonly WaveCounts[]) {
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
    };
  });
  return { ...row, waves };
}
