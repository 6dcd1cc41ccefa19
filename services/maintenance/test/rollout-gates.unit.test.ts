import { expect } from 'chai';
import { rolloutPolicySchema } from '@brokkr/contracts';
import { assignWaves } from '../src/rollouts/assign-waves.ts';
import { agentState, evaluateGate, type AgentReport } from '../src/rollouts/gate.ts';

const policy = (waves: unknown[]) => rolloutPolicySchema.parse({ waves });
const agents = (n: number, labels: (i: number) => string[] = () => []) =>
  Array.from({ length: n }, (_, i) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, labels: labels(i) }));

describe('rollout waves and gates (pure)', () => {
  it('assigns selector waves first-match, percent waves up to their cumulative share, the rest to the last wave', () => {
    const p = policy([
      { name: 'canary', selector: { labels: ['canary'] } },
      { name: 'quarter', percent: 25 },
      { name: 'half', percent: 50 },
      { name: 'rest', percent: 100 },
    ]);
    const fleet = agents(20, (i) => (i < 2 ? ['canary'] : []));
    const waves = assignWaves('r1', p.waves, fleet);
    const count = (w: number) => [...waves.values()].filter((x) => x === w).length;
    expect([count(0), count(1), count(2), count(3)]).to.deep.equal([2, 3, 5, 10]);
    expect(waves.get(fleet[0]!.id)).to.equal(0);
    expect(assignWaves('r1', p.waves, fleet)).to.deep.equal(waves);
    const other = assignWaves('r2', p.waves, fleet);
    expect(
      [...other.entries()].filter(([id, w]) => w === 1 && waves.get(id) === 1).length,
      'another rollout picks other agents',
    ).to.be.lessThan(3);
  });

  it('puts every agent in the last wave when no wave selects it', () => {
    const p = policy([
      { name: 'eu', selector: { labels: ['eu'] } },
      { name: 'us', selector: { labels: ['us'] } },
    ]);
    const waves = assignWaves('r', p.waves, agents(3));
    expect([...waves.values()]).to.deep.equal([1, 1, 1]);
  });

  const report = (wave: number, lastEvent: string | null, health: string | null, id = `${wave}-${Math.random()}`): AgentReport => ({
    agentId: id,
    wave,
    lastEvent,
    health,
  });
  const now = new Date('2026-11-24T10:00:00Z');
  const ago = (s: number) => new Date(now.getTime() - s * 1000);

  it('reads an agent as failed (FAILURE or failing), healthy (SUCCESS, not degraded/failing) or waiting', () => {
    expect(agentState(report(0, 'FAILURE', 'healthy'))).to.equal('failed');
    expect(agentState(report(0, 'SUCCESS', 'failing'))).to.equal('failed');
    expect(agentState(report(0, 'SUCCESS', 'degraded'))).to.equal('waiting');
    expect(agentState(report(0, 'SUCCESS', null))).to.equal('healthy');
    expect(agentState(report(0, null, null))).to.equal('waiting');
  });

  it('fails over max_failures (also for a late failure in an earlier wave), soaks, then advances; fails at the deadline', () => {
    const p = policy([
      { name: 'a', percent: 50, max_failures: 1, soak_seconds: 30, progress_deadline_seconds: 60 },
      { name: 'b', percent: 100, max_failures: 0, soak_seconds: 30, progress_deadline_seconds: 60 },
    ]);
    const base = { waves: p.waves, waveStartedAt: ago(10), healthySince: null, now };
    const oneFailed = [report(0, 'FAILURE', null), report(0, 'SUCCESS', 'healthy')];
    expect(evaluateGate({ ...base, waveIndex: 0, reports: oneFailed }).kind).to.equal('soak');
    expect(evaluateGate({ ...base, waveIndex: 0, reports: [...oneFailed, report(0, 'FAILURE', null)] }).kind).to.equal('fail');
    expect(evaluateGate({ ...base, waveIndex: 0, reports: oneFailed, healthySince: ago(31) }).kind).to.equal('advance');
    expect(evaluateGate({ ...base, waveIndex: 0, reports: [report(0, null, null)] }).kind).to.equal('wait');
    expect(evaluateGate({ ...base, waveIndex: 0, reports: [report(0, null, null)], waveStartedAt: ago(61) }).kind).to.equal('fail');
    const lateFailure = [report(0, 'FAILURE', null), report(0, 'FAILURE', null), report(1, 'SUCCESS', null)];
    const decision = evaluateGate({ ...base, waveIndex: 1, reports: lateFailure });
    expect(decision.kind).to.equal('fail');
    expect(decision.kind === 'fail' && decision.reason).to.include('wave "a"');
  });
});
