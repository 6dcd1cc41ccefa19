import { RRuleTemporal } from 'rrule-temporal';
import type { MaintenanceSchedule, ScheduledWindow, WindowGate } from '@brokkr/contracts';

/**
 * Maintenance windows as the hub checks them when one is stored and the agent evaluates them
 * before it changes its cluster (docs/maintenance-windows.md): one parser and one rule, so what the
 * hub accepts is what the agent can evaluate. Recurrences are RFC 5545 (DTSTART with TZID, or UTC),
 * evaluated by rrule-temporal in the rule's own time zone (daylight-saving changes included).
 */

const DTSTART = /^DTSTART(?:;TZID=([^:\n]+))?:(\d{8}T\d{6})(Z?)\s*$/m;
const FREQ = /^RRULE:(?:.*;)?FREQ=([A-Z]+)/m;
const TOO_FREQUENT = new Set(['SECONDLY', 'MINUTELY']);
const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** Seconds of a duration given as seconds or ISO 8601 (weeks, days, hours, minutes, seconds); undefined: not one. */
export function durationSeconds(duration: number | string): number | undefined {
  if (typeof duration === 'number') return Number.isInteger(duration) && duration > 0 ? duration : undefined;
  const m = ISO_DURATION.exec(duration);
  if (!m || duration === 'P' || duration.endsWith('T')) return undefined;
  const [w, d, h, min, s] = m.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number];
  const total = (((w * 7 + d) * 24 + h) * 60 + min) * 60 + s;
  return total > 0 ? total : undefined;
}

const parsed = new Map<string, RRuleTemporal>();

/** The rule, parsed once per process (a schedule holds few distinct rules). Throws on a bad rule. */
function ruleOf(rrule: string): RRuleTemporal {
  let rule = parsed.get(rrule);
  if (!rule) {
    rule = new RRuleTemporal({ rruleString: rrule.replaceAll('\r\n', '\n').trim() });
    if (parsed.size >= 1000) parsed.delete(parsed.keys().next().value!);
    parsed.set(rrule, rule);
  }
  return rule;
}

/**
 * Why the hub refuses to store a rule, or undefined: it must anchor its DTSTART in a time zone
 * (TZID) or in UTC (a floating time would mean another instant on every cluster), recur no more
 * often than hourly, and be one the library evaluates, now and from now on.
 */
export function ruleRefusal(rrule: string, now = Date.now()): string | undefined {
  const start = DTSTART.exec(rrule);
  if (!start) return 'the rule needs a DTSTART line, e.g. DTSTART;TZID=Europe/Berlin:20260105T020000';
  if (!start[1] && !start[3]) return 'DTSTART needs a TZID or a UTC time (Z): a floating time means another instant on every cluster';
  const freq = FREQ.exec(rrule)?.[1];
  if (!freq) return 'the rule needs an RRULE line with FREQ';
  if (TOO_FREQUENT.has(freq)) return `FREQ=${freq} is too frequent for a maintenance window (at most HOURLY)`;
  try {
    const rule = ruleOf(rrule);
    rule.previous(new Date(now), true);
    rule.next(new Date(now));
    return undefined;
  } catch (err) {
    parsed.delete(rrule);
    return err instanceof Error ? err.message : String(err);
  }
}

/** Whether one window is open at `now`, and when that next changes (undefined: never). Throws on a rule it cannot evaluate. */
export function windowPhase(rrule: string, durationSecondsValue: number, now: number): { open: boolean; changesAt: number | undefined } {
  const rule = ruleOf(rrule);
  const last = rule.previous(new Date(now), true);
  const closesAt = last ? last.epochMilliseconds + durationSecondsValue * 1000 : undefined;
  if (closesAt !== undefined && now < closesAt) return { open: true, changesAt: closesAt };
  return { open: false, changesAt: rule.next(new Date(now))?.epochMilliseconds };
}

/** What a decision is about: a stack (its id and its generator's), or the agent as a whole (work orders). */
export interface GateTarget {
  stackId?: string | undefined;
  generatorId?: string | undefined;
}

export interface GateDecision {
  /** The change must wait. */
  blocked: boolean;
  /** The window that holds it back. */
  window?: { id: string; name: string; type: 'allow' | 'deny' } | undefined;
  /** When it may next go ahead, as far as the schedule tells (undefined: no occurrence ahead). */
  opensAt?: number | undefined;
  /** The next instant at which the decision may change (a boundary or a bypass expiry); undefined: none. */
  recheckAt: number | undefined;
}

/** Whether the window speaks about this gate and target: a window for stacks or generators leaves work orders alone. */
export function windowCovers(w: ScheduledWindow, gate: WindowGate, target: GateTarget): boolean {
  if (!w.gates.includes(gate)) return false;
  if (!w.stack_ids.length && !w.generator_ids.length) return true;
  const stack = target.stackId?.toLowerCase();
  const generator = target.generatorId?.toLowerCase();
  return (!!stack && w.stack_ids.includes(stack)) || (!!generator && w.generator_ids.includes(generator));
}

const earliest = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

interface Phase {
  w: ScheduledWindow;
  open: boolean;
  changesAt: number | undefined;
}

/** A rule that cannot be evaluated fails closed: a deny window counts as open, an allow window as shut. */
function phaseOf(w: ScheduledWindow, now: number): Phase {
  try {
    return { w, ...windowPhase(w.rrule, w.duration_seconds, now) };
  } catch {
    return { w, open: w.type === 'deny', changesAt: undefined };
  }
}

/**
 * The one rule: a change covered by an open deny window waits until it closes; a change covered
 * by allow windows waits until one of them is open. A bypass not yet expired takes its window out.
 */
export function gateDecision(schedule: MaintenanceSchedule | undefined, gate: WindowGate, target: GateTarget, now: number): GateDecision {
  let recheckAt: number | undefined;
  const phases: Phase[] = [];
  for (const w of schedule?.windows ?? []) {
    if (!windowCovers(w, gate, target)) continue;
    const bypassedUntil = w.bypassed_until ? Date.parse(w.bypassed_until) : Number.NaN;
    if (bypassedUntil > now) {
      recheckAt = earliest(recheckAt, bypassedUntil);
      continue;
    }
    const phase = phaseOf(w, now);
    recheckAt = earliest(recheckAt, phase.changesAt);
    phases.push(phase);
  }
  const deny = phases.find((p) => p.w.type === 'deny' && p.open);
  if (deny) return { blocked: true, window: describe(deny.w), opensAt: deny.changesAt, recheckAt };
  const allows = phases.filter((p) => p.w.type === 'allow');
  if (allows.length && !allows.some((p) => p.open)) {
    const next = allows.reduce<Phase | undefined>((a, p) => (a && earliest(a.changesAt, p.changesAt) === a.changesAt ? a : p), undefined)!;
    return { blocked: true, window: describe(next.w), opensAt: next.changesAt, recheckAt };
  }
  return { blocked: false, recheckAt };
}

const describe = (w: ScheduledWindow) => ({ id: w.id, name: w.name, type: w.type });

/**
 * The next instant at which any window of the schedule opens or closes, or a bypass expires: when
 * what is held may change without a new schedule (the agent looks again then).
 */
export function scheduleBoundary(schedule: MaintenanceSchedule | undefined, now: number): number | undefined {
  let next: number | undefined;
  for (const w of schedule?.windows ?? []) {
    const bypassedUntil = w.bypassed_until ? Date.parse(w.bypassed_until) : Number.NaN;
    if (bypassedUntil > now) next = earliest(next, bypassedUntil);
    next = earliest(next, phaseOf(w, now).changesAt);
  }
  return next;
}
