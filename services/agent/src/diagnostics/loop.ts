import type { DiagnosticRequest, SubmitDiagnosticResult } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import { metricsFor, type Registry } from '@brokkr/telemetry';
import { errorMessage } from '../util/async.ts';
import { PendingLoop } from '../util/pending-loop.ts';
import { postResult } from '../util/post-result.ts';
import type { DiagnosticsBrokerApi } from './broker-api.ts';
import type { DiagnosticsCollector } from './collector.ts';

export interface DiagnosticsLoopDeps {
  api: DiagnosticsBrokerApi;
  collector: Pick<DiagnosticsCollector, 'collect'>;
  agentId: string;
  pollingIntervalMs: number;
  /** How long our broker may hold the pending request; 0 = plain polling. */
  longPollWaitSeconds: number;
  registry: Registry;
  logger: Logger;
  isActive(): boolean;
}

function createMetrics(registry: Registry) {
  return metricsFor(registry).counter({
    name: 'brokkr_agent_diagnostics_total',
    help: 'Diagnostic requests this agent claimed, by outcome (collected, collection_error, not_recorded)',
    labelNames: ['outcome'] as const,
  });
}

/**
 * On-demand diagnostics: wait for this agent's pending requests — woken at
 * once by the broker's long-poll (a request created wakes it) or by `wake()` (the live channel's
 * hint), else every polling interval — claim each, collect, and post the result. The broker's claim
 * is a compare-and-set, so of two processes running with this agent's identity only one collects
 * a request; a request is never claimed again once claimed, so it is never collected twice. A
 * result the broker does not take is retried a little, then left to the expiry sweep (`failed`).
 */
export class DiagnosticsLoop {
  private readonly outcomes;
  private readonly loop: PendingLoop<DiagnosticRequest>;

  constructor(private readonly deps: DiagnosticsLoopDeps) {
    this.outcomes = createMetrics(deps.registry);
    this.loop = new PendingLoop({
      pollingIntervalMs: deps.pollingIntervalMs,
      isActive: () => deps.isActive(),
      list: (signal) => deps.api.pending(deps.agentId, deps.longPollWaitSeconds, signal),
      take: (candidate) => this.take(candidate.id),
      listFailed: (err) => deps.logger.warn({ err: errorMessage(err) }, 'could not list pending diagnostic requests'),
      wakeCutsListing: true,
    });
  }

  /** Look now: a hint that a request is pending (live channel), or the agent just became ACTIVE. */
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

  private async take(id: string): Promise<boolean> {
    const request = await this.claim(id);
    if (request) await this.handle(request);
    return request !== undefined;
  }

  private async claim(id: string): Promise<DiagnosticRequest | undefined> {
    try {
      const request = await this.deps.api.claim(id);
      if (!request) this.deps.logger.debug({ diagnosticId: id }, 'diagnostic request not claimable (claimed elsewhere or expired)');
      return request;
    } catch (err) {
      this.deps.logger.warn({ diagnosticId: id, err: errorMessage(err) }, 'diagnostic request claim failed');
      return undefined;
    }
  }

  private async handle(request: DiagnosticRequest): Promise<void> {
    const log = this.deps.logger.child({ diagnosticId: request.id, deploymentObjectId: request.deployment_object_id });
    log.info({ requestedBy: request.requested_by }, 'diagnostic request claimed; collecting');
    const { body, error } = await this.deps.collector.collect(request.deployment_object_id);
    if (error) log.warn({ err: error }, 'diagnostics collection failed; the error is the result');
    if (await this.submit(request.id, body, log)) {
      this.outcomes.inc({ outcome: error ? 'collection_error' : 'collected' });
      log.info({ pods: (JSON.parse(body.pod_statuses) as unknown[]).length }, 'diagnostic result posted');
    } else {
      this.outcomes.inc({ outcome: 'not_recorded' });
    }
  }

  /** A refusal (409: maintenance failed it at expiry) is final. */
  private submit(id: string, result: SubmitDiagnosticResult, log: Logger): Promise<boolean> {
    return postResult(
      () => this.deps.api.submit(id, result),
      (err) => log.error({ err: errorMessage(err) }, 'diagnostic result not recorded; the broker marks the request failed when it expires'),
    );
  }
}
