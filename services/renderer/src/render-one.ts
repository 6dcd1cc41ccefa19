import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import type { RenderResult, Renderer } from '@brokkr/render';
import { recordRenderResult, type ClaimedRenderJob } from '@brokkr/render-jobs';
import { loadSourceBlob } from '@brokkr/sources';
import type { RendererMetrics } from './metrics.ts';

export interface RenderOneDeps {
  db: Queryable;
  renderer: Renderer;
  metrics: RendererMetrics;
  logger: Logger;
}

/** The job's render: its source from the content-addressed store, rendered in a sandboxed process for its tenant. */
async function renderClaimed(deps: RenderOneDeps, claimed: ClaimedRenderJob): Promise<RenderResult> {
  const { digest, ...job } = claimed.job;
  const blob = await loadSourceBlob(deps.db, digest);
  if (!blob) return { ok: false, reason: 'invalid', error: `the source ${digest} is not in the store` };
  return deps.renderer.render(claimed.tenant, { ...job, archive: blob.bytes });
}

/**
 * One claimed job: rendered, its result written (fenced on the claim, with the NOTIFY that wakes the
 * waiting api) and counted. Rejects only when the renderer was closed under it (the service is
 * stopping; its claim is released) or the database failed: then the job stays claimed until its
 * lease runs out and another claim takes it.
 */
export async function renderOne(deps: RenderOneDeps, claimed: ClaimedRenderJob): Promise<void> {
  const started = performance.now();
  deps.metrics.queueWait.observe(claimed.waited_seconds);
  if (claimed.attempts > 1) {
    deps.metrics.leaseTakeovers.inc();
    deps.logger.info({ job: claimed.id, attempts: claimed.attempts }, 'render job claimed again: the renderer that held it was lost');
  }
  const result = await renderClaimed(deps, claimed);
  const written = await recordRenderResult(deps.db, claimed, result);
  deps.metrics.renders.inc({ outcome: written ? (result.ok ? 'ok' : result.reason) : 'lost' });
  deps.metrics.renderDuration.observe({ kind: claimed.job.kind }, (performance.now() - started) / 1000);
  if (!written) deps.logger.info({ job: claimed.id }, 'render result not written: the job was claimed again or nobody waits for it');
}
