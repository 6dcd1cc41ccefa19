import { renderFailed } from '../errors/catalogue.ts';
import type { RenderFailure } from './prepare.ts';

const MAX_FAILURES_SHOWN = 100;

/** Throws 422 `render_failed` naming every agent that cannot be rendered for (the first 100 in details), if there is one. */
export function refuseUnrenderable(failures: readonly RenderFailure[]): void {
  const first = failures[0];
  if (!first) return;
  const more = failures.length > 1 ? ` (and ${failures.length - 1} more agent(s) in details)` : '';
  throw renderFailed.with(`Cannot render for agent "${first.agent_name}": ${first.reason}${more}`, {
    failures: failures.slice(0, MAX_FAILURES_SHOWN),
    total: failures.length,
  });
}
