import { expect } from 'chai';
import type { MaintenanceSchedule, ScheduledWindow } from '@brokkr/contracts';
import { durationSeconds, gateDecision, ruleRefusal, scheduleBoundary, windowPhase } from '../src/index.ts';

const STACK = '11111111-1111-1111-1111-111111111111';
const OTHER = '22222222-2222-2222-2222-222222222222';
const GENERATOR = '33333333-3333-3333-3333-333333333333';
const at = (iso: string) => Date.parse(iso);

function window(overrides: Partial<ScheduledWindow>): ScheduledWindow {
  return {
    id: '44444444-4444-4444-4444-444444444444',
    name: 'w',
    type: 'deny',
    // Saturdays 02:00 Berlin time, for two hours.
    rrule: 'DTSTART;TZID=Europe/Berlin:20260103T020000\nRRULE:FREQ=WEEKLY;BYDAY=SA',
    duration_seconds: 7200,
    stack_ids: [],
    generator_ids: [],
    gates: ['new_versions', 'drift_correction', 'prune', 'work_orders'],
    bypassed_until: null,
    ...overrides,
  };
}
const schedule = (...windows: ScheduledWindow[]): MaintenanceSchedule => ({ windows });

describe('maintenance windows (the rule the hub checks and the agent enforces)', () => {
  it('reads a window in its own time zone, across a daylight-saving change', () => {
    // Berlin is UTC+2 in summer, UTC+1 in winter: 02:00 local is 00:00Z in July, 01:00Z in December.
    expect(windowPhase(window({}).rrule, 7200, at('2026-07-04T00:30:00Z'))).to.deep.equal({
      open: true,
      changesAt: at('2026-07-04T02:00:00Z'),
    });
    expect(windowPhase(window({}).rrule, 7200, at('2026-12-05T00:30:00Z'))).to.deep.equal({
      open: false,
      changesAt: at('2026-12-05T01:00:00Z'),
    });
    expect(windowPhase(window({}).rrule, 7200, at('2026-12-05T01:00:00Z')).open).to.equal(true);
  });

  it('holds a change inside a deny window until it closes, and outside every allow window until one opens', () => {
    const inside = at('2026-07-04T01:00:00Z');
    const outside = at('2026-07-06T12:00:00Z');
    const deny = gateDecision(schedule(window({})), 'new_versions', { stackId: STACK }, inside);
    expect(deny).to.deep.include({ blocked: true, opensAt: at('2026-07-04T02:00:00Z'), recheckAt: at('2026-07-04T02:00:00Z') });
    expect(gateDecision(schedule(window({})), 'new_versions', { stackId: STACK }, outside).blocked).to.equal(false);
    const allow = schedule(window({ type: 'allow' }));
    expect(gateDecision(allow, 'prune', { stackId: STACK }, inside).blocked).to.equal(false);
    expect(gateDecision(allow, 'prune', { stackId: STACK }, outside)).to.deep.include({
      blocked: true,
      opensAt: at('2026-07-11T00:00:00Z'),
    });
  });

  it('applies a window only to its gates and to the stacks or generators it names; work orders only to whole-agent windows', () => {
    const inside = at('2026-07-04T01:00:00Z');
    const onStack = schedule(window({ stack_ids: [STACK], gates: ['new_versions'] }));
    expect(gateDecision(onStack, 'new_versions', { stackId: STACK }, inside).blocked).to.equal(true);
    expect(gateDecision(onStack, 'new_versions', { stackId: OTHER }, inside).blocked).to.equal(false);
    expect(gateDecision(onStack, 'prune', { stackId: STACK }, inside).blocked).to.equal(false);
    expect(gateDecision(onStack, 'work_orders', {}, inside).blocked).to.equal(false);
    const onGenerator = schedule(window({ generator_ids: [GENERATOR] }));
    expect(gateDecision(onGenerator, 'new_versions', { stackId: OTHER, generatorId: GENERATOR }, inside).blocked).to.equal(true);
    expect(gateDecision(schedule(window({})), 'work_orders', {}, inside).blocked).to.equal(true);
  });

  it('lets a bypass lift its window until it expires, and looks again then', () => {
    const inside = at('2026-07-04T01:00:00Z');
    const bypassed = schedule(window({ bypassed_until: '2026-07-04T01:30:00.000Z' }));
    expect(gateDecision(bypassed, 'new_versions', { stackId: STACK }, inside)).to.deep.equal({
      blocked: false,
      recheckAt: at('2026-07-04T01:30:00Z'),
    });
    expect(gateDecision(bypassed, 'new_versions', { stackId: STACK }, at('2026-07-04T01:31:00Z')).blocked).to.equal(true);
  });

  it('fails closed on a rule it cannot evaluate: a deny window counts as open, an allow window as shut', () => {
    const broken = 'DTSTART;TZID=Nowhere/Atlantis:20260103T020000\nRRULE:FREQ=WEEKLY';
    expect(gateDecision(schedule(window({ rrule: broken })), 'new_versions', { stackId: STACK }, Date.now()).blocked).to.equal(true);
    expect(
      gateDecision(schedule(window({ rrule: broken, type: 'allow' })), 'new_versions', { stackId: STACK }, Date.now()).blocked,
    ).to.equal(true);
  });

  it('refuses rules without a time zone, too frequent or unparsable, and reads durations in seconds or ISO 8601', () => {
    expect(ruleRefusal(window({}).rrule)).to.equal(undefined);
    expect(ruleRefusal('DTSTART:20260103T020000Z\nRRULE:FREQ=DAILY')).to.equal(undefined);
    expect(ruleRefusal('DTSTART:20260103T020000\nRRULE:FREQ=DAILY')).to.include('TZID');
    expect(ruleRefusal('DTSTART:20260103T020000Z\nRRULE:FREQ=MINUTELY')).to.include('too frequent');
    expect(ruleRefusal('DTSTART;TZID=Nowhere/Atlantis:20260103T020000\nRRULE:FREQ=DAILY')).to.be.a('string');
    expect([durationSeconds('PT2H'), durationSeconds('P1DT30M'), durationSeconds('P1W'), durationSeconds(90)]).to.deep.equal([
      7200, 88200, 604800, 90,
    ]);
    expect([durationSeconds('PT'), durationSeconds('P'), durationSeconds('2h'), durationSeconds(0)]).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('names the schedule\u2019s next boundary: the earliest window turning or bypass expiring, none for an empty schedule', () => {
    const inside = at('2026-07-04T01:00:00Z');
    expect(scheduleBoundary(schedule(window({})), inside)).to.equal(at('2026-07-04T02:00:00Z'));
    expect(scheduleBoundary(schedule(window({}), window({ bypassed_until: '2026-07-04T01:30:00.000Z' })), inside)).to.equal(
      at('2026-07-04T01:30:00Z'),
    );
    expect(scheduleBoundary(schedule(window({})), at('2026-07-04T03:00:00Z'))).to.equal(at('2026-07-11T00:00:00Z'));
    expect(scheduleBoundary(schedule(), inside)).to.equal(undefined);
  });
});
