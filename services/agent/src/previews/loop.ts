import type { PendingPreview } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import { metricsFor, type Registry } from '@brokkr/telemetry';
import { BrokerError } from '../broker/http.ts';
import { errorMessage } from '../util/async.ts';
import { PendingLoop } from '../util/pending-loop.ts';
import { postResult } from '../util/post-result.ts';
import type { PreviewBrokerApi } from './broker-api.ts';
import { previewOnCluster, type PreviewOutcome, type PreviewScope } from './dry-run.ts';

export interface PreviewLoopDeps {
  api: PreviewBrokerApi;
  /** The cluster, as the reconciler sees it (same objects, discovery, owner, watched namespace). */
  scope: PreviewScope;
  agentId: string;
  pollingIntervalMs: number;
  /** How long the hub may hold the pending request; 0 = plain polling. */
  longPollWaitSeconds: number;
  registry: Registry;
  logger: Logger;
  isActive(): boolean;
  /** The dry run (tests may swap it); defaults to previewOnCluster. */
  run?: (scope: PreviewScope, preview: PendingPreview) => Promise<PreviewOutcome>;
}

function createMetrics(registry: Registry) {
  return metricsFor(registry).counter({
    name: 'brokkr_agent_previews_total',
    help: 'Diff previews this agent ran, by verdict reported (clean, changes, error) or not_recorded',
    labelNames: ['outcome'] as const,
  });
}

/**
 * Fleet-wide diff previews: wait for previews this agent has not reported on — woken at
 * once by the hub's long-poll or by `wake()` (the live channel's hint), else every polling
 * interval — dry-run each against the cluster and post the result. Nothing is claimed: a dry run
 * changes nothing, so running one twice (a restart before the report) is harmless, and the hub
 * keeps only the first report. A preview whose result the hub refused is not run again.
 */
export class PreviewLoop {
  private readonly outcomes;
  private readonly givenUp = new Set<string>();
  private readonly loop: PendingLoop<PendingPreview>;
  private saidUnsupported = false;

  constructor(private readonly deps: PreviewLoopDeps) {
    this.outcomes = createMetrics(deps.registry);
    this.loop = new PendingLoop({
      pollingIntervalMs: deps.pollingIntervalMs,
      isActive: () => deps.isActive(),
      list: (signal) => deps.api.pending(deps.agentId, deps.longPollWaitSeconds, signal),
      take: (preview) => this.take(preview),
      listFailed: (err) => this.listFailed(err),
      wakeCutsListing: true,
    });
  }

  /** Look now: a hint (live channel), or the agent just became ACTIVE. */
  wake(): void {
    this.loop.wake();
  }

  async run(stop: AbortSignal): Promise<void> {
    try {
      await this.loop.run(stop);
    } finally {
      await this.deps.api.close().catch(() => undefined);
    }
  }

  private async take(preview: PendingPreview): Promise<boolean> {
    if (this.givenUp.has(preview.id)) return false;
    await this.handle(preview);
    return true;
  }

  private listFailed(err: unknown): void {
    // Brokkr's own broker has no previews: say so once, keep polling quietly.
    const unsupported = err instanceof BrokerError && err.status === 404;
    if (!unsupported || !this.saidUnsupported) this.deps.logger.warn({ err: errorMessage(err) }, 'could not list pending previews');
    this.saidUnsupported ||= unsupported;
  }

  private async handle(preview: PendingPreview): Promise<void> {
    const log = this.deps.logger.child({ previewId: preview.id, stackId: preview.stack_id });
    const run = this.deps.run ?? previewOnCluster;
    const outcome = await run(this.deps.scope, preview).catch((err: unknown) => ({ objects: [], error: errorMessage(err) }));
    const verdict =
      outcome.error || outcome.objects.some((o) => o.error)
        ? 'error'
        : outcome.objects.some((o) => o.action !== 'unchanged')
          ? 'changes'
          : 'clean';
    if (await this.submit(preview.id, outcome, log)) {
      this.outcomes.inc({ outcome: verdict });
      log.info({ verdict, objects: outcome.objects.length }, 'preview result posted');
    } else {
      this.givenUp.add(preview.id);
      this.outcomes.inc({ outcome: 'not_recorded' });
    }
  }

  /** A refusal (409: reported already or expired; 4xx) is final. */
  private submit(id: string, outcome: PreviewOutcome, log: Logger): Promise<boolean> {
    return postResult(
      () => this.deps.api.submit(id, { objects: outcome.objects, error: outcome.error }),
      (err) => log.error({ err: errorMessage(err) }, 'preview result not recorded'),
    );
  }
}
