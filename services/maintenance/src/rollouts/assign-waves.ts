import { createHash } from 'node:crypto';
import type { RolloutWave } from '@brokkr/contracts';

export interface TargetedAgent {
  id: string;
  labels: readonly string[];
}

/**
 * Which wave each targeted agent belongs to. Waves are filled in order: a selector wave takes
 * every unassigned agent carrying all its labels; a percent wave tops the agents assigned so far
 * up to its cumulative share (rounded up); the last wave takes whoever is left. Agents are taken
 * in an order shuffled per rollout (a hash of rollout and agent id), so the same clusters are not
 * always the canaries, yet a re-run computes the same waves.
 */
export function assignWaves(rolloutId: string, waves: readonly RolloutWave[], agents: readonly TargetedAgent[]): Map<string, number> {
  const order = [...agents].sort((a, b) => rank(rolloutId, a.id).localeCompare(rank(rolloutId, b.id)));
  const assigned = new Map<string, number>();
  const unassigned = () => order.filter((a) => !assigned.has(a.id));
  waves.forEach((wave, index) => {
    if (wave.selector) {
      const wanted = wave.selector.labels;
      for (const agent of unassigned()) if (wanted.every((l) => agent.labels.includes(l))) assigned.set(agent.id, index);
    } else if (wave.percent !== undefined) {
      const target = Math.ceil((wave.percent / 100) * order.length);
      for (const agent of unassigned().slice(0, Math.max(0, target - assigned.size))) assigned.set(agent.id, index);
    }
  });
  for (const agent of unassigned()) assigned.set(agent.id, waves.length - 1);
  return assigned;
}

function rank(rolloutId: string, agentId: string): string {
  return createHash('sha256').update(`${rolloutId}:${agentId}`).digest('hex');
}
