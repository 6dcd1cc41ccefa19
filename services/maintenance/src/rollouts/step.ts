import { agentReports, stackAgents, waveApprovals, type RolloutRow } from '../sql/rollouts/queries.ts';
import { assignRolloutAgents } from '../sql/rollouts/assign-rollout-agents.ts';
import type { RolloutChange } from '../sql/rollouts/update-rollout.ts';
import type { RolloutWave } from '@brokkr/contracts';
import type { TaskClient } from '../sql/queryable.ts';
import { assignWaves } from './assign-waves.ts';
import { evaluateGate, type AgentReport } from './gate.ts';

export interface RolloutEvent {
  type: 'rollout.started' | 'rollout.wave_started' | 'rollout.succeeded' | 'rollout.failed' | 'rollout.rolled_back' | 'approval.requested';
  data: Record<string, unknown>;
}

/** What one tick decided for one rollout: the row's new state (none: unchanged), its events, whom to wake. */
export interface RolloutStep {
  change?: RolloutChange;
  events: RolloutEvent[];
  wake: string[];
}

const agentsOfWave = (reports: readonly AgentReport[], wave: number) => reports.filter((r) => r.wave === wave).map((r) => r.agentId);

/** A wave's approval rule; policies stored before approvals existed lack the fields (none needed). */
function approvalRule(r: RolloutRow, wave: number) {
  const stored: Partial<RolloutWave> = r.policy.waves[wave]!;
  return { required: stored.required_approvals ?? 0, approvers: stored.approvers ?? [], ttlSeconds: stored.approval_ttl_seconds ?? 86_400 };
}

/**
 * Whether wave `wave` may be released now: it needs no approvals, or it has enough unexpired ones
 * of the digest it would ship. When it may not, the step that waits there (approval.requested is
 * sent by the step that starts waiting, once).
 */
async function approvalWait(
  db: TaskClient,
  r: RolloutRow,
  wave: number,
  keep: Omit<RolloutChange, 'approvalWave'>,
): Promise<RolloutStep | undefined> {
  const rule = approvalRule(r, wave);
  if (rule.required === 0) return undefined;
  const { digest, approvals } = await waveApprovals(db, r.id, wave);
  if (approvals >= rule.required) return undefined;
  if (r.approval_wave === wave) return { events: [], wake: [] };
  const data = {
    rollout_id: r.id,
    stack_id: r.stack_id,
    deployment_object_id: r.deployment_object_id,
    wave,
    name: r.policy.waves[wave]!.name,
    digest,
    required_approvals: rule.required,
    approvals,
    approvers: rule.approvers,
    expires_after_seconds: rule.ttlSeconds,
  };
  return { change: { ...keep, approvalWave: wave }, events: [{ type: 'approval.requested', data }], wake: [] };
}

/** Pending: assign the targeted agents to waves and release the first. */
async function start(db: TaskClient, r: RolloutRow, now: Date): Promise<RolloutStep> {
  const ids = { rollout_id: r.id, stack_id: r.stack_id, deployment_object_id: r.deployment_object_id };
  const waves = assignWaves(r.id, r.policy.waves, await stackAgents(db, r.stack_id));
  await assignRolloutAgents(db, r.id, waves);
  const perWave = r.policy.waves.map((_, i) => [...waves.values()].filter((w) => w === i).length);
  const started: RolloutEvent = { type: 'rollout.started', data: { ...ids, baseline_object_id: r.baseline_object_id, waves: perWave } };
  if (waves.size === 0) {
    const change = {
      status: 'succeeded',
      releasedWave: r.policy.waves.length - 1,
      waveStartedAt: now,
      waveHealthySince: null,
      message: 'no targeted agents',
      finished: true,
    } as const;
    return { change, events: [started, { type: 'rollout.succeeded', data: ids }], wake: [] };
  }
  const held = {
    status: 'progressing',
    releasedWave: -1,
    waveStartedAt: now,
    waveHealthySince: null,
    message: null,
    finished: false,
  } as const;
  const waiting = await approvalWait(db, r, 0, held);
  if (waiting) return { change: waiting.change ?? held, events: [started, ...waiting.events], wake: [] };
  const first = [...waves].filter(([, w]) => w === 0).map(([id]) => id);
  return {
    change: { status: 'progressing', releasedWave: 0, waveStartedAt: now, waveHealthySince: null, message: null, finished: false },
    events: [started, { type: 'rollout.wave_started', data: { ...ids, wave: 0, name: r.policy.waves[0]!.name, agents: first.length } }],
    wake: first,
  };
}

function fail(r: RolloutRow, reports: readonly AgentReport[], failure: { reason: string; failedAgents: string[] }): RolloutStep {
  const { reason, failedAgents } = failure;
  const ids = { rollout_id: r.id, stack_id: r.stack_id, deployment_object_id: r.deployment_object_id };
  const failed: RolloutEvent = { type: 'rollout.failed', data: { ...ids, wave: r.released_wave, reason, failed_agents: failedAgents } };
  const base = { releasedWave: r.released_wave, waveStartedAt: r.wave_started_at, waveHealthySince: null, finished: true };
  if (!r.policy.auto_rollback) return { change: { ...base, status: 'failed', message: reason }, events: [failed], wake: [] };
  const released = reports.filter((x) => x.wave <= r.released_wave).map((x) => x.agentId);
  return {
    change: { ...base, status: 'rolled_back', message: `${reason}; rolled back to the previous deployment object` },
    events: [failed, { type: 'rollout.rolled_back', data: { ...ids, baseline_object_id: r.baseline_object_id } }],
    wake: released,
  };
}

/** Progressing: read the released agents' reports and let the wave's gate decide. */
async function progress(db: TaskClient, r: RolloutRow, now: Date): Promise<RolloutStep> {
  const ids = { rollout_id: r.id, stack_id: r.stack_id, deployment_object_id: r.deployment_object_id };
  const reports = await agentReports(db, r.id, r.deployment_object_id);
  if (r.approval_wave !== null) return awaitingApproval(db, r, reports, now);
  const decision = evaluateGate({
    waves: r.policy.waves,
    waveIndex: r.released_wave,
    reports,
    waveStartedAt: r.wave_started_at ?? now,
    healthySince: r.wave_healthy_since,
    now,
  });
  const keep = { status: r.status, releasedWave: r.released_wave, waveStartedAt: r.wave_started_at, message: null, finished: false };
  switch (decision.kind) {
    case 'fail':
      return fail(r, reports, decision);
    case 'wait':
      return r.wave_healthy_since ? { change: { ...keep, waveHealthySince: null }, events: [], wake: [] } : { events: [], wake: [] };
    case 'soak':
      return r.wave_healthy_since
        ? { events: [], wake: [] }
        : { change: { ...keep, waveHealthySince: decision.since }, events: [], wake: [] };
    case 'advance': {
      const next = r.released_wave + 1;
      if (next >= r.policy.waves.length) {
        return {
          change: { ...keep, status: 'succeeded', waveHealthySince: null, finished: true },
          events: [{ type: 'rollout.succeeded', data: ids }],
          wake: [],
        };
      }
      const waiting = await approvalWait(db, r, next, { ...keep, waveHealthySince: null });
      return waiting ?? release(r, reports, next, now);
    }
  }
}

/** Releases wave `wave`: its agents are served the new object (and woken). */
function release(r: RolloutRow, reports: readonly AgentReport[], wave: number, now: Date): RolloutStep {
  const ids = { rollout_id: r.id, stack_id: r.stack_id, deployment_object_id: r.deployment_object_id };
  const agents = agentsOfWave(reports, wave);
  return {
    change: { status: r.status, releasedWave: wave, waveStartedAt: now, waveHealthySince: null, message: null, finished: false },
    events: [{ type: 'rollout.wave_started', data: { ...ids, wave, name: r.policy.waves[wave]!.name, agents: agents.length } }],
    wake: agents,
  };
}

/**
 * Waiting at a wave for approvals (every gate before it passed). The approval that completes the
 * count releases the wave itself (the api, in its transaction); this releases it when the count was
 * completed while the rollout was paused, and otherwise keeps waiting.
 */
async function awaitingApproval(db: TaskClient, r: RolloutRow, reports: readonly AgentReport[], now: Date): Promise<RolloutStep> {
  const wave = r.approval_wave!;
  const keep = {
    status: r.status,
    releasedWave: r.released_wave,
    waveStartedAt: r.wave_started_at,
    waveHealthySince: null,
    message: null,
    finished: false,
  };
  const waiting = await approvalWait(db, r, wave, keep);
  return waiting ?? release(r, reports, wave, now);
}

/** One tick for one rollout, inside the task's transaction (the row is locked). */
export function stepRollout(db: TaskClient, r: RolloutRow, now: Date): Promise<RolloutStep> {
  return r.status === 'pending' ? start(db, r, now) : progress(db, r, now);
}
