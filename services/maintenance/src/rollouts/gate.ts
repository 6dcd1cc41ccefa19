import type { RolloutWave } from '@brokkr/contracts';

/** What one agent reported for the rollout's object: its last apply event and its health. */
export interface AgentReport {
  agentId: string;
  wave: number;
  /** Upper-cased status of the agent's latest event for the object (SUCCESS / FAILURE), if any. */
  lastEvent: string | null;
  /** deployment_health.status for the object, if reported. */
  health: string | null;
}

export type AgentState = 'healthy' | 'failed' | 'waiting';

/** Failed: the apply failed or the object is failing. Healthy: applied and neither failing nor degraded. */
export function agentState(r: AgentReport): AgentState {
  if (r.lastEvent === 'FAILURE' || r.health === 'failing') return 'failed';
  if (r.lastEvent === 'SUCCESS' && r.health !== 'degraded') return 'healthy';
  return 'waiting';
}

export type GateDecision =
  { kind: 'fail'; reason: string; failedAgents: string[] } | { kind: 'advance' } | { kind: 'soak'; since: Date } | { kind: 'wait' };

export interface GateInput {
  waves: readonly RolloutWave[];
  /** The released wave (every wave up to it is out). */
  waveIndex: number;
  reports: readonly AgentReport[];
  waveStartedAt: Date;
  healthySince: Date | null;
  now: Date;
}

/** The first released wave with more failed agents than it tolerates (a late failure in an earlier wave counts too). */
function overTolerance(waves: readonly RolloutWave[], waveIndex: number, reports: readonly AgentReport[]): GateDecision | undefined {
  for (let j = 0; j <= waveIndex; j++) {
    const wave = waves[j]!;
    const failed = reports.filter((r) => r.wave === j && agentState(r) === 'failed').map((r) => r.agentId);
    if (failed.length > wave.max_failures) {
      const reason = `${failed.length} agent(s) failed in wave "${wave.name}" (max_failures ${wave.max_failures})`;
      return { kind: 'fail', reason, failedAgents: failed };
    }
  }
  return undefined;
}

/**
 * The gate of the released wave. It fails when a released wave has more failed agents than it
 * tolerates, or when the released agents are not all applied and healthy by the wave's progress
 * deadline; it passes once they all were for soak_seconds (tolerated failures do not hold it up).
 */
export function evaluateGate(input: GateInput): GateDecision {
  const { waves, waveIndex, reports, now } = input;
  const wave = waves[waveIndex]!;
  const released = reports.filter((r) => r.wave <= waveIndex);
  const tooMany = overTolerance(waves, waveIndex, reports);
  if (tooMany) return tooMany;
  const settled = released.every((r) => agentState(r) !== 'waiting');
  if (!settled) {
    const elapsed = (now.getTime() - input.waveStartedAt.getTime()) / 1000;
    if (elapsed >= wave.progress_deadline_seconds) {
      return {
        kind: 'fail',
        reason: `wave "${wave.name}" was not applied and healthy within ${wave.progress_deadline_seconds} s`,
        failedAgents: released.filter((r) => agentState(r) === 'waiting').map((r) => r.agentId),
      };
    }
    return { kind: 'wait' };
  }
  const since = input.healthySince ?? now;
  const soaked = (now.getTime() - since.getTime()) / 1000 >= wave.soak_seconds;
  return soaked || reports.every((r) => r.wave !== waveIndex) ? { kind: 'advance' } : { kind: 'soak', since };
}
