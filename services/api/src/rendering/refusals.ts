import { errorKind } from '../errors/api-error.ts';
import type { RenderFailure } from './prepare.ts';

const MAX_FAILURES_SHOWN = 100;

export const renderFailed = errorKind(422, 'render_failed', 'The object cannot be rendered for some targeted agents; nothing was stored');
export const rendererUnavailable = errorKind(
  503,
  'renderer_unavailable',
  'This api cannot render charts or overlays: its renderer is not installed (scripts/build-renderer.sh)',
);

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
