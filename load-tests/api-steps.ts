/**
 * The "highest sustainable arrival rate" search: climb a ladder of fixed arrival rates, one short
 * k6 step each, and stop at the first rung the api cannot hold.
 */
import type { StepResult } from './api-k6.ts';

export const LADDER = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000];
/** Where a search starts unless told otherwise (250 is only tried when 500 fails). */
export const FIRST_RUNG = 500;
export const P99_LIMIT_MS = 50;

/** A rung holds when p99 < 50 ms, under 1% errors and under 1% of the scheduled requests dropped. */
export function holds(step: StepResult): boolean {
  return step.p99 < P99_LIMIT_MS && step.errorRate < 0.01 && step.dropped < 0.01 * step.rate * step.seconds;
}

export interface RateSearch {
  steps: StepResult[];
  /** Highest rung that held; 0 when none did. */
  max: number;
}

/**
 * Climbs from `startAt` (a rung known to hold elsewhere saves time); if that very first rung fails,
 * walks down instead until one holds.
 */
export async function searchMaxRate(run: (rate: number) => Promise<StepResult>, startAt = FIRST_RUNG): Promise<RateSearch> {
  const steps: StepResult[] = [];
  const first = Math.max(0, LADDER.indexOf(startAt));
  let max = 0;
  for (let i = first; i < LADDER.length; i++) {
    const step = await run(LADDER[i]!);
    steps.push(step);
    if (!holds(step)) break;
    max = step.rate;
  }
  for (let i = first - 1; max === 0 && i >= 0; i--) {
    const step = await run(LADDER[i]!);
    steps.push(step);
    if (holds(step)) max = step.rate;
  }
  return { steps, max };
}
